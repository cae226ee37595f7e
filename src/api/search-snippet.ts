// What GET /v1/conversations?q= shows of the message a search found: the words around the match, on one line,
// so a list of look-alike titles says which conversation is which.
import { regExpLiteral } from '../shared/regexp-literal.ts';

const BEFORE = 40;
const AFTER = 80;

/** `text` around the first place that contains `search` (any case), cut at spaces, with … where it was cut. */
export function searchSnippet(text: string, search: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  // ILIKE and JavaScript may fold a rare letter differently: then the message's beginning
  const match = new RegExp(regExpLiteral(search), 'iu').exec(flat);
  const at = match?.index ?? 0;
  const end = match ? at + match[0].length : 0;
  let start = Math.max(0, at - BEFORE);
  if (start > 0) {
    const space = flat.indexOf(' ', start);
    start = space !== -1 && space < at ? space + 1 : start;
  }
  let stop = Math.min(flat.length, end + AFTER);
  if (stop < flat.length) {
    const space = flat.lastIndexOf(' ', stop);
    stop = space > end ? space : stop;
  }
  // never half of a surrogate pair at either end
  if (start > 0 && /[\uDC00-\uDFFF]/.test(flat[start]!)) start += 1;
  if (stop < flat.length && /[\uD800-\uDBFF]/.test(flat[stop - 1]!)) stop -= 1;
  return `${start > 0 ? '…' : ''}${flat.slice(start, stop)}${stop < flat.length ? '…' : ''}`;
}
