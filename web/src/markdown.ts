// A reply's Markdown as React elements: paragraphs, emphasis, inline code, fenced code, lists (nested), GFM pipe
// tables, links, headings, quotes and rules. Written here rather than taken from a package so that what reaches
// the page is only ever the elements below: no raw HTML (a reply's `<script>` is text, React escapes it), no
// dangerouslySetInnerHTML, links only to http(s) and mailto. Parsing is line by line and iterative; nesting is
// capped (lists and emphasis) so a hostile reply cannot make it slow or exhaust the stack, and a half-streamed
// reply (an open fence, a table's first row) renders as what it is so far.
//
// Plain .ts with createElement (no JSX) so Node's tests import it as the page does.
import { createElement as h, type ReactNode } from 'react';

/** Deeper list levels stay at this one; deeper emphasis is text. */
const MAX_LIST_DEPTH = 6;
const MAX_INLINE_DEPTH = 6;

type Align = 'left' | 'center' | 'right' | undefined;

type Block =
  | { kind: 'p'; text: string }
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'code'; lang: string; text: string }
  | { kind: 'list'; list: List }
  | { kind: 'table'; head: string[]; align: Align[]; rows: string[][] }
  | { kind: 'quote'; text: string }
  | { kind: 'hr' };

interface List {
  ordered: boolean;
  start: number;
  items: Item[];
}
interface Item {
  lines: string[];
  children: List[];
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const LIST_ITEM = /^(\s*)([-*+]|(\d{1,9})[.)])\s+(.*)$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const TABLE_DELIMITER = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

/** The blocks of a reply, top level. */
export function parseBlocks(text: string): Block[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length) blocks.push({ kind: 'p', text: paragraph.join('\n') });
    paragraph = [];
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (!line.trim()) {
      flush();
      i += 1;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[1]!;
      const body: string[] = [];
      i += 1;
      // an unfinished fence (a reply still streaming) runs to the end
      while (i < lines.length && !new RegExp(`^\\s{0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}\\s*$`).test(lines[i]!)) {
        body.push(lines[i]!);
        i += 1;
      }
      i += 1;
      blocks.push({ kind: 'code', lang: fence[2] ?? '', text: body.join('\n') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      blocks.push({ kind: 'heading', level: heading[1]!.length, text: heading[2]! });
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      flush();
      blocks.push({ kind: 'hr' });
      i += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      flush();
      const quoted: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i]!)) quoted.push(QUOTE.exec(lines[i++]!)![1]!);
      blocks.push({ kind: 'quote', text: quoted.join('\n') });
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_DELIMITER.test(lines[i + 1]!) && lines[i + 1]!.includes('-')) {
      const head = cells(line);
      const delimiter = cells(lines[i + 1]!);
      if (delimiter.length === head.length || lines[i + 1]!.includes('|')) {
        flush();
        const align = head.map((_, n): Align => {
          const d = delimiter[n]?.trim() ?? '';
          return d.startsWith(':') && d.endsWith(':') ? 'center' : d.endsWith(':') ? 'right' : d.startsWith(':') ? 'left' : undefined;
        });
        i += 2;
        const rows: string[][] = [];
        while (i < lines.length && lines[i]!.trim() && lines[i]!.includes('|')) {
          const row = cells(lines[i]!);
          rows.push(head.map((_, n) => row[n] ?? ''));
          i += 1;
        }
        blocks.push({ kind: 'table', head, align, rows });
        continue;
      }
    }
    if (LIST_ITEM.test(line) && !(paragraph.length && !/^\s*([-*+]|1[.)])\s/.test(line))) {
      flush();
      const [list, next] = parseList(lines, i);
      blocks.push({ kind: 'list', list });
      i = next;
      continue;
    }
    paragraph.push(line);
    i += 1;
  }
  flush();
  return blocks;
}

/** A table row's cells: split on pipes that are not escaped, the outer pipes dropped. */
function cells(line: string): string[] {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

/**
 * A list from line `start`: items, their continuation lines, and lists nested by indentation (a stack, not
 * recursion, so depth costs nothing). Returns the list and the first line after it.
 */
function parseList(lines: string[], start: number): [List, number] {
  const first = LIST_ITEM.exec(lines[start]!)!;
  const root: List = { ordered: first[3] !== undefined, start: Number(first[3] ?? 1), items: [] };
  const stack: { indent: number; list: List }[] = [{ indent: first[1]!.length, list: root }];
  let i = start;
  while (i < lines.length) {
    const line = lines[i]!;
    if (!line.trim()) {
      // a blank line ends the list unless the list goes on after it
      const after = lines[i + 1];
      if (after !== undefined && (LIST_ITEM.test(after) || /^\s{2,}\S/.test(after)) && !FENCE.test(after)) {
        i += 1;
        continue;
      }
      break;
    }
    if (FENCE.test(line) || HEADING.test(line)) break;
    const item = LIST_ITEM.exec(line);
    if (!item) {
      // a continuation of the last item's text
      const top = stack[stack.length - 1]!.list;
      const last = top.items[top.items.length - 1];
      if (!last) break;
      last.lines.push(line.trim());
      i += 1;
      continue;
    }
    const indent = item[1]!.length;
    const ordered = item[3] !== undefined;
    // back out to the level this indentation belongs to (between two levels: the deeper one)
    while (stack.length > 1 && indent <= stack[stack.length - 2]!.indent) stack.pop();
    let top = stack[stack.length - 1]!;
    if (indent > top.indent && top.list.items.length && stack.length < MAX_LIST_DEPTH) {
      const nested: List = { ordered, start: Number(item[3] ?? 1), items: [] };
      top.list.items[top.list.items.length - 1]!.children.push(nested);
      top = { indent, list: nested };
      stack.push(top);
    } else if (stack.length === 1 && indent <= top.indent && ordered !== root.ordered) {
      break; // another kind of list at the top level is a list of its own
    }
    top.list.items.push({ lines: [item[4]!], children: [] });
    i += 1;
  }
  return [root, i];
}

// ---- inline ----

const SAFE_URL = /^(https?:\/\/|mailto:)[^\s<>"`]+$/i;
const BARE_URL = /\bhttps?:\/\/[^\s<>"`]*[^\s<>"`.,;:!?'()[\]{}*_~]/gi;
const EMPHASIS = ['**', '__', '~~', '*', '_'] as const;
type Marker = (typeof EMPHASIS)[number];
const ESCAPABLE = /[\\`*_{}[\]()#+\-.!|~<>]/;

/** A link's address if it is one we let a person follow; anything else (javascript:, data:, relative) is not. */
export function safeHref(url: string): string | undefined {
  const trimmed = url.trim();
  return SAFE_URL.test(trimmed) ? trimmed : undefined;
}

function link(href: string, children: ReactNode, key: number): ReactNode {
  return h('a', { key, href, target: '_blank', rel: 'noreferrer noopener' }, children);
}

/** Plain text with its bare http(s) addresses as links. */
function textWithUrls(text: string, out: ReactNode[]): void {
  let last = 0;
  for (const match of text.matchAll(BARE_URL)) {
    if (match.index > last) out.push(text.slice(last, match.index));
    out.push(link(match[0], match[0], out.length));
    last = match.index + match[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
}

const isSpace = (c: string | undefined) => c === undefined || /\s/.test(c);
const isWord = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/** Inline Markdown as React nodes. `depth` caps nested emphasis and link text; `inLink` forbids links in links. */
export function parseInline(text: string, depth = 0, inLink = false): ReactNode[] {
  const out: ReactNode[] = [];
  let plain = '';
  const emit = (node: ReactNode) => {
    if (plain) textWithUrls(plain, out);
    plain = '';
    out.push(node);
  };
  // where no closer exists from a position on, no later opener finds one either: each is searched for once
  const noCloser = new Map<string, number>();
  let closeBracket = -1;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length && ESCAPABLE.test(text[i + 1]!)) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (c === '`') {
      let run = 1;
      while (text[i + run] === '`') run += 1;
      const fence = '`'.repeat(run);
      const end = noCloser.has(fence) && noCloser.get(fence)! <= i ? -1 : text.indexOf(fence, i + run);
      if (end > i) {
        emit(h('code', { key: out.length }, text.slice(i + run, end).replace(/^ (.+) $/s, '$1')));
        i = end + run;
      } else {
        noCloser.set(fence, i);
        plain += fence;
        i += run;
      }
      continue;
    }
    if (c === '[' && !inLink && depth < MAX_INLINE_DEPTH) {
      if (closeBracket < i) {
        const found = text.indexOf(']', i);
        closeBracket = found < 0 ? text.length : found;
      }
      if (closeBracket < text.length && text[closeBracket + 1] === '(') {
        const known = noCloser.get(')');
        const close = known !== undefined && known <= closeBracket ? -1 : text.indexOf(')', closeBracket + 2);
        if (close < 0) noCloser.set(')', closeBracket);
        const target = close > 0 ? text.slice(closeBracket + 2, close) : '';
        if (close > 0 && !/\s/.test(target.trim())) {
          const label = parseInline(text.slice(i + 1, closeBracket), depth + 1, true);
          const href = safeHref(target);
          // an address we do not follow shows its words only
          emit(href ? link(href, label, out.length) : h('span', { key: out.length }, label));
          i = close + 1;
          continue;
        }
      }
    }
    if (c === '<') {
      const auto = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(text.slice(i, i + 2049));
      if (auto && safeHref(auto[1]!)) {
        emit(link(auto[1]!, auto[1]!, out.length));
        i += auto[0].length;
        continue;
      }
    }
    if ((c === '*' || c === '_' || c === '~') && depth < MAX_INLINE_DEPTH) {
      const marker = EMPHASIS.find((m) => text.startsWith(m, i));
      const end = marker ? closer(text, i, marker, noCloser) : -1;
      if (marker && end > 0) {
        const inner = parseInline(text.slice(i + marker.length, end), depth + 1, inLink);
        const tag = marker === '~~' ? 'del' : marker.length === 2 ? 'strong' : 'em';
        emit(h(tag, { key: out.length }, inner));
        i = end + marker.length;
        continue;
      }
      if (marker) {
        plain += marker;
        i += marker.length;
        continue;
      }
    }
    plain += c;
    i += 1;
  }
  if (plain) textWithUrls(plain, out);
  return out;
}

/** Where the emphasis opened by `marker` at `at` closes, or -1. */
function closer(text: string, at: number, marker: Marker, noCloser: Map<string, number>): number {
  const after = text[at + marker.length];
  if (isSpace(after) || after === marker[0]) return -1;
  // snake_case and 2*3*4 are not emphasis
  if (marker[0] !== '~' && marker.length === 1 && isWord(text[at - 1]) && (marker === '_' || isWord(after))) return -1;
  if (marker === '__' && isWord(text[at - 1])) return -1;
  const known = noCloser.get(marker);
  if (known !== undefined && known <= at) return -1;
  let from = at + marker.length + 1;
  for (;;) {
    const end = text.indexOf(marker, from);
    if (end < 0) {
      noCloser.set(marker, at);
      return -1;
    }
    const before = text[end - 1];
    const next = text[end + marker.length];
    const valid =
      !isSpace(before) &&
      next !== marker[0] &&
      !(marker[0] === '_' && isWord(next)) &&
      !(marker.length === 1 && marker === '*' && text[end - 1] === '*');
    if (valid) return end;
    from = end + 1;
  }
}

// ---- rendering ----

function renderList(list: List, key: number | string): ReactNode {
  const items = list.items.map((item, n) =>
    h('li', { key: n }, ...parseInline(item.lines.join('\n')), ...item.children.map((child, c) => renderList(child, `list-${c}`))),
  );
  return list.ordered ? h('ol', { key, start: list.start === 1 ? undefined : list.start }, items) : h('ul', { key }, items);
}

function renderBlock(block: Block, key: number): ReactNode {
  switch (block.kind) {
    case 'p':
      return h('p', { key }, ...parseInline(block.text));
    case 'heading':
      // a reply's headings sit under the page's own: small ones, h3 at most
      return h(`h${Math.min(6, block.level + 2)}`, { key, className: 'md-heading' }, ...parseInline(block.text));
    case 'code':
      return h(
        'pre',
        { key, className: 'md-code' },
        h('code', block.lang ? { 'data-lang': block.lang, className: `language-${block.lang.replace(/[^\w-]/g, '')}` } : null, block.text),
      );
    case 'list':
      return renderList(block.list, key);
    case 'table':
      return h(
        'div',
        { key, className: 'md-table' },
        h(
          'table',
          null,
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              block.head.map((cell, n) => h('th', { key: n, style: align(block.align[n]) }, ...parseInline(cell))),
            ),
          ),
          h(
            'tbody',
            null,
            block.rows.map((row, r) =>
              h(
                'tr',
                { key: r },
                row.map((cell, n) => h('td', { key: n, style: align(block.align[n]) }, ...parseInline(cell))),
              ),
            ),
          ),
        ),
      );
    case 'quote':
      return h('blockquote', { key }, ...parseInline(block.text));
    case 'hr':
      return h('hr', { key });
  }
}

const align = (a: Align) => (a ? { textAlign: a } : undefined);

/** A reply's text as React elements (an array, each keyed). */
export function renderMarkdown(text: string): ReactNode[] {
  return parseBlocks(text).map(renderBlock);
}

/** A reply rendered from Markdown; `children` (a streaming caret) follows its last block. */
export function Markdown({ text, children }: { text: string; children?: ReactNode }): ReactNode {
  return h('div', { className: 'md' }, ...renderMarkdown(text), children);
}
