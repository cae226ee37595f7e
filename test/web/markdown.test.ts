// A reply's Markdown as the page renders it (web/src/markdown.ts), read as the HTML React makes of it: each
// construct becomes its element, raw HTML stays text, links go only to http(s) and mailto, and hostile input
// (very deep nesting, runs of markers) renders fast.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { Markdown } from '../../web/src/markdown.ts';

const html = (text: string) => renderToStaticMarkup(createElement(Markdown, { text }));
/** The markup inside the wrapper. */
const inner = (text: string) => html(text).replace(/^<div class="md">|<\/div>$/g, '');

describe('Markdown: each construct', () => {
  test('paragraphs split on blank lines and keep their line breaks', () => {
    assert.equal(inner('One\ntwo\n\nThree'), '<p>One\ntwo</p><p>Three</p>');
  });

  test('emphasis, strong, strikethrough and inline code', () => {
    assert.equal(
      inner('A *soft* and **firm** and _lean_ and __bold__ and ~~gone~~ and `x * y`.'),
      '<p>A <em>soft</em> and <strong>firm</strong> and <em>lean</em> and <strong>bold</strong> and <del>gone</del> and <code>x * y</code>.</p>',
    );
  });

  test('snake_case names, 2*3*4 and a lone asterisk stay as written', () => {
    assert.equal(inner('order_id and customer_email; 2*3*4 = 24; a * b'), '<p>order_id and customer_email; 2*3*4 = 24; a * b</p>');
  });

  test('a fenced code block keeps its text verbatim, language noted', () => {
    assert.equal(
      inner('Run:\n\n```sql\nSELECT * FROM t WHERE a < 3 AND **b**;\n```\nDone.'),
      '<p>Run:</p><pre class="md-code"><code data-lang="sql" class="language-sql">SELECT * FROM t WHERE a &lt; 3 AND **b**;</code></pre><p>Done.</p>',
    );
  });

  test('unordered and ordered lists, nested by indentation', () => {
    assert.equal(
      inner('- one\n- two\n  - two a\n  - two b\n    1. deep\n- three'),
      '<ul><li>one</li><li>two<ul><li>two a</li><li>two b<ol><li>deep</li></ol></li></ul></li><li>three</li></ul>',
    );
    assert.equal(inner('3. c\n4. d'), '<ol start="3"><li>c</li><li>d</li></ol>');
    assert.equal(inner('Steps:\n1. **Mix** it\n2. Bake'), '<p>Steps:</p><ol><li><strong>Mix</strong> it</li><li>Bake</li></ol>');
  });

  test('a GFM pipe table with alignment', () => {
    assert.equal(
      inner('| Name | Price |\n|:-----|------:|\n| Ale | 4.50 |\n| *Stout* | 5 |'),
      '<div class="md-table"><table><thead><tr><th style="text-align:left">Name</th><th style="text-align:right">Price</th></tr></thead>' +
        '<tbody><tr><td style="text-align:left">Ale</td><td style="text-align:right">4.50</td></tr>' +
        '<tr><td style="text-align:left"><em>Stout</em></td><td style="text-align:right">5</td></tr></tbody></table></div>',
    );
  });

  test('links: http(s) and mailto open in a new tab without a referrer; bare addresses are links too', () => {
    assert.equal(
      inner('[Docs](https://example.com/a?b=1) or <mailto:a@example.com>, see https://example.org/x.'),
      '<p><a href="https://example.com/a?b=1" target="_blank" rel="noreferrer noopener">Docs</a> or ' +
        '<a href="mailto:a@example.com" target="_blank" rel="noreferrer noopener">mailto:a@example.com</a>, see ' +
        '<a href="https://example.org/x" target="_blank" rel="noreferrer noopener">https://example.org/x</a>.</p>',
    );
  });

  test('headings are small headings under the page’s own', () => {
    assert.equal(
      inner('# Title\n## Sub\n#### Small'),
      '<h3 class="md-heading">Title</h3><h4 class="md-heading">Sub</h4><h6 class="md-heading">Small</h6>',
    );
  });

  test('quotes and rules', () => {
    assert.equal(inner('> said\n> twice\n\n---\nafter'), '<blockquote>said\ntwice</blockquote><hr/><p>after</p>');
  });

  test('a backslash escapes a marker', () => {
    assert.equal(inner('\\*not em\\*'), '<p>*not em*</p>');
  });
});

describe('Markdown: a reply still streaming', () => {
  test('an unfinished fence is a code block so far', () => {
    assert.equal(
      inner('Here:\n```js\nconst a = 1;'),
      '<p>Here:</p><pre class="md-code"><code data-lang="js" class="language-js">const a = 1;</code></pre>',
    );
  });
  test('a table’s first row alone is text, then a table once its delimiter comes', () => {
    assert.equal(inner('| a | b |'), '<p>| a | b |</p>');
    assert.match(
      inner('| a | b |\n|--'),
      /^<div class="md-table"><table><thead><tr><th>a<\/th><th>b<\/th><\/tr><\/thead><tbody><\/tbody><\/table><\/div>$/,
    );
  });
  test('an unclosed emphasis, link or code span is text', () => {
    assert.equal(
      inner('**bold so far and [a link](https://exa and `code'),
      '<p>**bold so far and [a link](<a href="https://exa" target="_blank" rel="noreferrer noopener">https://exa</a> and `code</p>',
    );
  });
});

describe('Markdown: hostile input', () => {
  test('raw HTML is text, never markup', () => {
    const out = html(
      '<script>alert(1)</script>\n\n<img src=x onerror="alert(2)"> and **<b>bold</b>**\n\n| <img src=x onerror=alert(3)> |\n|---|',
    );
    assert.doesNotMatch(out, /<script|<img|<b>/);
    assert.match(out, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(out, /&lt;img src=x onerror=&quot;alert\(2\)&quot;&gt;/);
    assert.match(out, /<strong>&lt;b&gt;bold&lt;\/b&gt;<\/strong>/);
  });

  test('javascript:, data: and relative links show their words, not a link', () => {
    for (const target of [
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      ' javascript:alert(1)',
      'data:text/html,<script>',
      '/relative',
      'vbscript:x',
    ]) {
      const out = inner(`[click](${target})`);
      assert.doesNotMatch(out, /<a /, target);
      assert.match(out, /click/, target);
    }
    assert.doesNotMatch(inner('<javascript:alert(1)>'), /<a /);
    assert.doesNotMatch(inner('[x](https://a.example" onmouseover="alert(1))'), /onmouseover="/);
  });

  const fast = (name: string, text: string) =>
    test(`${name} renders in under two seconds (a shared CI machine)`, () => {
      const started = performance.now();
      const out = html(text);
      const ms = performance.now() - started;
      assert.ok(out.length > 0);
      assert.ok(ms < 2000, `${name}: ${ms.toFixed(0)} ms`);
    });
  fast(
    '10,000 nested list levels (one more space each)',
    Array.from({ length: 10_000 }, (_, n) => `${' '.repeat(n)}- level ${n}`).join('\n'),
  );
  fast('10,000 list markers on one line', `${'- '.repeat(10_000)}x`);
  fast('10,000-deep emphasis', `${'*a '.repeat(10_000)}${' a*'.repeat(10_000)}`);
  fast('10,000-deep strong and strike', `${'**~~'.repeat(10_000)}x${'~~**'.repeat(10_000)}`);
  fast('10,000 nested links', `${'['.repeat(10_000)}x${'](https://a.example)'.repeat(10_000)}`);
  fast('100,000 unclosed markers', '*_`[<~'.repeat(20_000));
  fast('10,000 quote levels', `${'>'.repeat(10_000)} x`);
  fast('a 100,000-character table delimiter', `a|b\n${'|-'.repeat(50_000)}|x`);
});
