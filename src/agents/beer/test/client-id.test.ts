// Client ids are compared after normalization (issue 17, item 5): a query that spells another client's id
// in pieces, in lower case or in Unicode look-alikes is refused like one that names it plainly, and the
// conversation's own id passes however it is spelled. Row-level security would confine such a query to
// nothing anyway; the refusal is what tells the model why.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { guardBeerSql } from '../sql-policy.ts';
import { normalizeClientId } from '../../../shared/client-id.ts';

const OWN = 'CLT-XLX836';

test('a token, a body and SQL spell one client id one way', () => {
  assert.equal(normalizeClientId(' clt-xlx836 '), OWN);
  assert.equal(normalizeClientId('ＣＬＴ－ＸＬＸ８３６'), OWN);
});

test("another client's id is refused however the query builds it", async () => {
  const spellings = [
    "SELECT * FROM purchases WHERE client_id = 'CLT-CIR922'",
    "SELECT * FROM purchases WHERE client_id = 'clt-cir922'",
    "SELECT * FROM purchases WHERE client_id = 'CLT-' || 'CIR922'",
    "SELECT * FROM purchases WHERE client_id = 'C' || 'LT' || '-CI' || 'R922'",
    "SELECT * FROM purchases WHERE client_id = concat('CLT', '-', 'CIR922')",
    "SELECT * FROM purchases WHERE client_id = upper('clt-' || 'cir' || '922')",
    "SELECT * FROM purchases WHERE client_id = ('CLT-' || 'CIR' || 922::text)",
    "SELECT * FROM purchases WHERE client_id = 'ＣＬＴ－ＣＩＲ９２２'",
  ];
  for (const sql of spellings) {
    const result = await guardBeerSql(sql, OWN);
    assert.equal(result.ok, false, sql);
    assert.match((result as { error: string }).error, /another client's data \(CLT-CIR922\)/, sql);
  }
});

test('the own client id passes in any spelling', async () => {
  for (const sql of [
    "SELECT sum(quantity) FROM purchases WHERE client_id = 'clt-xlx836'",
    "SELECT sum(quantity) FROM purchases WHERE client_id = 'CLT-' || 'XLX836'",
    'SELECT beer, total_quantity FROM sales_by_beer',
  ]) {
    assert.equal((await guardBeerSql(sql, 'clt-xlx836')).ok, true, sql);
  }
});
