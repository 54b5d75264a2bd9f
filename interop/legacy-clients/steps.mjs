// The step runner of the three client scripts: each step asserts what it
// got; a failure is printed with its stack and makes the process exit
// non-zero, and the next steps still run.
export function steps(label) {
  let passed = 0;
  let failed = 0;
  return {
    async step(name, fn) {
      try {
        await fn();
        passed++;
        console.log(`ok   ${label}: ${name}`);
      } catch (err) {
        failed++;
        console.error(`FAIL ${label}: ${name}: ${err?.stack ?? err}`);
        process.exitCode = 1;
      }
    },
    summary() {
      console.log(`${label}: ${passed} passed, ${failed} failed`);
    },
  };
}
