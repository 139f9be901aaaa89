// Drives the browser host (host.html) in headless Chromium with playwright-core: waits
// for the app to render the tool's result, sorts the table, clicks "+10%" on a row (the
// app calls the app-only `reprice` tool through the host), waits for the new price in the
// app and the host's log, and takes a screenshot. Prints one JSON line of what it saw.
// argv[2]: JSON {nodeModules, chromium, url, screenshot, timeoutMs}
import { createRequire } from "node:module";
import path from "node:path";

const config = JSON.parse(process.argv[2]);
const require = createRequire(path.join(config.nodeModules, "noop.js"));
const { chromium } = require("playwright-core");

const seen = { console: [] };
const browser = await chromium.launch({
  executablePath: config.chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  timeout: config.timeoutMs,
});
try {
  const page = await browser.newPage({ viewport: { width: 720, height: 560 } });
  page.setDefaultTimeout(config.timeoutMs);
  page.on("console", (message) => seen.console.push(message.text()));
  page.on("pageerror", (error) => seen.console.push("pageerror: " + error.message));
  await page.goto(config.url);
  await page.waitForFunction(() => window.hostState && (window.hostState.ready || window.hostState.errors.length));
  const host = await page.evaluate(() => window.hostState);
  seen.era = host.era;
  seen.hostErrors = host.errors;
  const app = page.frameLocator("#app");
  await app.locator("tbody tr").first().waitFor();
  seen.rowsBefore = await app.locator("tbody tr td.sku").allTextContents();
  await app.locator("th[data-key=price]").click(); // sort by price, ascending
  seen.sortedByPrice = await app.locator("tbody tr td.sku").allTextContents();
  await app.locator("tr[data-sku=B-200] button.reprice").click();
  await app.locator("#status").filter({ hasText: "repriced B-200" }).waitFor();
  seen.priceAfter = await app.locator("tr[data-sku=B-200] td.price").textContent();
  seen.appStatus = await app.locator("#status").textContent();
  seen.hostCalls = await page.evaluate(() => window.hostState.calls);
  seen.hostLog = await page.locator("#log").innerText();
  await page.screenshot({ path: config.screenshot, fullPage: true });
} catch (error) {
  seen.error = String(error && error.message ? error.message : error);
  const page = browser.contexts()[0]?.pages()[0];
  if (page) {
    seen.hostLog = await page.locator("#log").innerText().catch(() => null);
    seen.hostState = await page.evaluate(() => window.hostState).catch(() => null);
    await page.screenshot({ path: config.screenshot, fullPage: true }).catch(() => null);
  }
  process.exitCode = 1;
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
