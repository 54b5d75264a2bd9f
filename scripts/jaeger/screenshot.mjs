// Helper of screenshot.sh: waits until Jaeger's HTTP API has the traces of
// wymcp's two contained faults, then opens the trace of the contained panic
// in headless Chromium, expands the span and its events, and saves a PNG.
//
// Environment (set by screenshot.sh):
//   JAEGER_URL   the query service, e.g. http://127.0.0.1:16686
//   SERVICE      the service name wymcp reported (default wymcp)
//   OUT          where to write the PNG
//   CHROMIUM     the browser (default /usr/bin/chromium)
//   PROFILE_DIR  a fresh, empty Chromium profile directory
import { chromium } from "playwright-core";
import { writeFileSync } from "node:fs";

const base = process.env.JAEGER_URL;
const service = process.env.SERVICE || "wymcp";
const out = process.env.OUT;
const profile = process.env.PROFILE_DIR;
if (!base || !out || !profile) {
  throw new Error("JAEGER_URL, OUT and PROFILE_DIR must be set");
}

const log = (...a) => console.error("jaeger/screenshot.mjs:", ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The exception event of a span, as Jaeger's API shows it: a log whose
// "event" field is "exception".
function exceptionOf(span) {
  for (const l of span.logs || []) {
    const f = Object.fromEntries(l.fields.map((x) => [x.key, x.value]));
    if (f.event === "exception") return f;
  }
  return null;
}

// findTrace polls /api/traces for the service's span named operation until
// one has an exception event with a stack, and returns its trace id.
async function findTrace(operation, deadline) {
  const url = `${base}/api/traces?service=${encodeURIComponent(service)}` +
    `&operation=${encodeURIComponent(operation)}&limit=20&lookback=1h`;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url);
      last = `HTTP ${r.status}`;
      if (r.ok) {
        const { data } = await r.json();
        for (const t of data || []) {
          for (const s of t.spans) {
            const e = s.operationName === operation && exceptionOf(s);
            if (e && String(e["exception.stacktrace"] || "").includes("goroutine ")) {
              log(`${operation}: trace ${t.traceID}, exception ${e["exception.type"]}: ${e["exception.message"]}`);
              return t.traceID;
            }
          }
        }
        last = `${(data || []).length} traces, none with an exception event yet`;
      }
    } catch (err) {
      last = String(err);
    }
    await sleep(200);
  }
  throw new Error(`${operation}: not queryable in Jaeger in time (${last})`);
}

const deadline = Date.now() + 60_000;
const panicTrace = await findTrace("tools/call panic", deadline);
await findTrace("tools/call bad_result", deadline);

const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  chromiumSandbox: false, // --no-sandbox
  args: [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
  viewport: { width: 1400, height: 900 },
  deviceScaleFactor: 1,
});
try {
  // Nothing leaves the loopback.
  await context.route("**/*", (route) => {
    const host = new URL(route.request().url()).hostname;
    return host === "127.0.0.1" || host === "localhost" ? route.continue() : route.abort();
  });
  const page = context.pages()[0] || (await context.newPage());
  await page.goto(`${base}/trace/${panicTrace}`, { waitUntil: "load" });
  const row = page.locator('.row[data-operation="tools/call panic"]');
  await row.waitFor({ timeout: 15_000 });
  await row.click();
  const detailBox = page.locator(".detail").first();
  await detailBox.waitFor();
  // Open the span's events; the exception event carries the stack.
  await detailBox.locator("h3", { hasText: "Events" }).click();
  const exc = detailBox.locator('.event.exception');
  await exc.waitFor({ state: "visible" });
  const text = await exc.innerText();
  for (const want of ["exception.type", "exception.message", "exception.stacktrace", "goroutine ", "main.demoTools"]) {
    if (!text.includes(want)) throw new Error(`the exception event on the page lacks ${JSON.stringify(want)}`);
  }
  writeFileSync(out, await page.screenshot({ type: "png" }));
  log(`wrote ${out} (trace ${panicTrace})`);
} finally {
  await context.close();
}
