// Preloaded (node --require) into server-everything by start-everything.sh.
// Its Streamable HTTP transport calls app.listen(PORT) with no host, which
// listens on every interface; and with PORT=0 it cannot say which port it
// got. This makes a listen on a bare port listen on 127.0.0.1 only (the
// server has a tool, get-env, that answers with its whole environment), and
// prints "interop-gateway: listening on 127.0.0.1:<port>" to stdout once it
// listens. Nothing else of the server changes.
'use strict';
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
	const bare = typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]));
	if (bare && typeof args[1] !== 'string') {
		args[0] = Number(args[0]);
		args.splice(1, 0, '127.0.0.1');
		this.once('listening', () => {
			const a = this.address();
			process.stdout.write(`interop-gateway: listening on ${a.address}:${a.port}\n`);
		});
	}
	return listen.apply(this, args);
};
