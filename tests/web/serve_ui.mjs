// Drives `kforge serve`'s page in Debian's chromium with Playwright, as a person would: the run's
// graph and nodes render; the person plans and applies a proposal, opens a node, edits its code
// in the page and sees the edit's verdict, then starts a search and watches its nodes appear
// while it runs. Each answer must appear, and the node table must grow as evaluations land.
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
  // The graph (cytoscape) and the curve (Chart.js) draw on canvases.
  seen.graph_canvas = await page.locator('#graph canvas').count();
  seen.curve_canvas = await page.locator('#curve canvas').count();
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

  // Open a node (the first), edit its code in the page, judge it, and see the verdict.
  await page.locator('#nodes tbody tr').first().locator('a').click();
  await page.locator('#node-title', { hasText: /default schedule|root|first/ }).waitFor({ timeout: 30000 }).catch(() => {});
  seen.opened = (await page.locator('#node-title').innerText()).trim();
  // The code editor (CodeMirror): a line typed at the top of the kernel.
  await page.locator('.CodeMirror-code').first().waitFor({ timeout: 30000 });
  await page.click('.CodeMirror-lines');
  await page.keyboard.press('Control+Home');
  await page.keyboard.type('// edited in the browser');
  await page.keyboard.press('Enter');
  await page.click('#edit-judge');
  await page.locator('#answer', { hasText: /edit of #|error:/ }).waitFor({ timeout: 300000 });
  seen.edit = (await page.locator('#answer').innerText()).trim();
  await page.locator('#node-title', { hasText: /browser-edit/ }).waitFor({ timeout: 30000 });
  seen.edit_verdict = (await page.locator('#node-sub').innerText()).trim();
  // The edit is a new node (its text is new); `apply 1` may have been a second path to one.
  await page.locator('#nodes tbody tr').nth(seen.rows_at_start).waitFor({ timeout: 30000 });
  seen.rows_after_edit = await page.locator('#nodes tbody tr').count();

  // Hand the wheel to a search and watch it add nodes while it runs: the table grows from the
  // run's event stream before the command's answer comes back.
  await page.fill('#command', 'search greedy 3');
  await page.press('#command', 'Enter');
  await page.locator('#nodes tbody tr').nth(seen.rows_after_edit).waitFor({ timeout: 300000 });
  seen.answer_when_a_node_appeared = (await page.locator('#answer').innerText()).trim().slice(0, 40);
  await page.locator('#answer', { hasText: /judged \d+ nodes|error:/ }).waitFor({ timeout: 300000 });
  seen.search = (await page.locator('#answer').innerText()).trim().split('\n').pop();
  seen.rows_after_search = await page.locator('#nodes tbody tr').count();

  // Start a long search and take the wheel back with Stop once its first node lands.
  await page.fill('#command', 'search mcts 40');
  await page.press('#command', 'Enter');
  await page.locator('#nodes tbody tr').nth(seen.rows_after_search).waitFor({ timeout: 300000 });
  await page.click('#stop');
  await page.locator('#answer', { hasText: /judged \d+ nodes|error:/ }).waitFor({ timeout: 300000 });
  seen.stopped = (await page.locator('#answer').innerText()).trim().split('\n').slice(-2).join(' | ');
  seen.rows_at_end = await page.locator('#nodes tbody tr').count();

  // The node's page: its roofline chart, and the profiler's findings once `profile` ran.
  seen.roofline_canvas = await page.locator('#roofline canvas').count();
  await page.fill('#command', 'profile');
  await page.press('#command', 'Enter');
  await page.locator('#findings li', { hasText: /-bound at/ }).first().waitFor({ timeout: 120000 });
  seen.findings = (await page.locator('#findings').innerText()).trim().split('\n')[0];
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
