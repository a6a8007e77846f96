// Drives `kforge serve`'s page in Debian's chromium with Playwright, as a person would: the run's
// graph and nodes render, then the person plans, applies a proposal, and edits the code in the
// page; each answer must appear, and the node table must grow as the evaluations land.
//
//   node serve_ui.mjs URL SCREENSHOT.png      (URL: the page's address with #token=..&run=..)
// Prints one JSON line of what it saw; exits 1 with the reason when a step fails.
import { chromium } from 'playwright-core';

const [url, shot] = process.argv.slice(2);
const seen = {};
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1800 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForSelector('#nodes tbody tr', { timeout: 30000 });
  seen.rows_at_start = await page.locator('#nodes tbody tr').count();
  seen.graph_svg = await page.locator('#graph svg').count();
  seen.curve_svg = await page.locator('#curve svg').count();
  seen.human_rows = await page.locator('#nodes tbody tr', { hasText: 'human' }).count();
  await page.locator('#code .k').first().waitFor({ timeout: 30000 });  // the node's code, highlighted
  seen.code_shown = (await page.locator('#code').innerText()).length;

  await page.click('button[data-cmd="plan"]');
  // Locator waits, not waitForFunction: the page's CSP forbids eval, and the test keeps it on.
  await page.locator('#answer', { hasText: /proposals for #/ }).waitFor({ timeout: 120000 });
  seen.plan = (await page.locator('#answer').innerText()).split('\n')[0];

  await page.fill('#command', 'apply 1');
  await page.press('#command', 'Enter');
  await page.locator('#answer', { hasText: /\[human\]|error:/ }).waitFor({ timeout: 300000 });
  seen.apply = (await page.locator('#answer').innerText()).trim();

  const source = await page.inputValue('#edit-source');
  await page.fill('#edit-source', '// edited in the browser\n' + source);
  await page.click('#edit-judge');
  await page.locator('#answer', { hasText: /edit of #|error:/ }).waitFor({ timeout: 300000 });
  seen.edit = (await page.locator('#answer').innerText()).trim();
  await page.locator('#nodes tbody tr').nth(seen.rows_at_start + 1).waitFor({ timeout: 30000 });
  seen.rows_at_end = await page.locator('#nodes tbody tr').count();
  seen.errors = errors;
  if (shot) await page.screenshot({ path: shot, fullPage: true });
  console.log(JSON.stringify(seen));
} catch (e) {
  console.log(JSON.stringify(seen));
  console.error('serve_ui: ' + e.message);
  process.exitCode = 1;
} finally {
  await browser.close();
}
