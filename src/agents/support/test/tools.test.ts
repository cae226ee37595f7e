// The support agent's tools against real PostgreSQL with the fixture data of
// src/agents/support/migrations/002_support.sql, each call in a transaction as brigade_app, like the runtime runs it.
import { loadConfig } from '../../../config.ts';
import { createOfflineTaskModel } from '../../../model/offline-tasks.ts';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { freshDatabase } from '../../../../test/support/harness.ts';
import { createPool, inTransaction } from '../../../db/pool.ts';
import { supportImplementations } from '../implementations.ts';
import { supportTools } from '../tools.ts';
import { describeIssues } from '../../../shared/tool-spec.ts';
import type { ToolContext } from '../../../activities/tool-context.ts';
import { builtInCatalog } from '../../catalog.ts';

const JOHN = { id: '1213210', name: 'John Doe', email: 'john@gmail.com', phone: '123-456-7890', username: 'johndoe' };
const JOHN_ORDERS = [
  { id: '13579', customer_id: '1213210', product: 'Smartphone Case', quantity: 2, price: 19.99, status: 'Processing' },
  { id: '24601', customer_id: '1213210', product: 'Wireless Headphones', quantity: 1, price: 79.99, status: 'Shipped' },
  { id: '90357', customer_id: '1213210', product: 'Smartphone Case', quantity: 1, price: 19.99, status: 'Shipped' },
];

let db: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
let admin: pg.Pool;
let callCount = 0;

function specOf(name: string) {
  const spec = supportTools.find((tool) => tool.name === name);
  assert.ok(spec, `no tool spec named ${name}`);
  return spec;
}

function contextFor(client: pg.ClientBase): ToolContext {
  callCount += 1;
  return {
    db: client,
    userId: 'support-test',
    conversationId: 'conversation-support-test',
    callId: `call-${callCount}`,
    services: { config: loadConfig({}), taskModel: createOfflineTaskModel(builtInCatalog()), pool },
  };
}

/** Validates the arguments with the tool's schema, then runs the tool on `client` (no transaction of its own). */
async function callOn(client: pg.ClientBase, name: string, args: unknown): Promise<unknown> {
  const parsed = specOf(name).args.safeParse(args);
  assert.ok(parsed.success, `arguments of ${name} should be valid: ${parsed.success ? '' : describeIssues(parsed.error)}`);
  const implementation = supportImplementations[name];
  assert.ok(implementation, `no implementation for ${name}`);
  return implementation(parsed.data, contextFor(client));
}

/** Runs one tool call in its own transaction as brigade_app, like the runtime's tool activity. */
function call(name: string, args: unknown): Promise<unknown> {
  return inTransaction(pool, (client) => callOn(client, name, args));
}

/** A transaction held open by the test, to interleave two writers deterministically. */
async function openTransaction(): Promise<pg.PoolClient> {
  const client = await pool.connect();
  await client.query('BEGIN');
  return client;
}

async function finish(client: pg.PoolClient, how: 'COMMIT' | 'ROLLBACK'): Promise<void> {
  try {
    await client.query(how);
  } finally {
    client.release();
  }
}

/** After a failed step: drop the connections (released ones are skipped). */
function abandon(...clients: pg.PoolClient[]): void {
  for (const client of clients) {
    try {
      client.release(true);
    } catch {
      // already released
    }
  }
}

/** Waits until `count` sessions of this database are blocked on a lock. */
async function waitForLockWaiters(count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rows } = await admin.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if (rows[0].n >= count) return;
    if (Date.now() > deadline) assert.fail(`expected ${count} session(s) waiting on a lock, saw ${rows[0].n}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function orderStatus(id: string): Promise<string> {
  const { rows } = await admin.query('SELECT status FROM orders WHERE id = $1', [id]);
  return rows[0].status;
}

before(async () => {
  db = await freshDatabase();
  pool = createPool(db.url, { max: 12 });
  admin = createPool(db.adminUrl, { role: null, max: 2 });
});

after(async () => {
  await pool?.end();
  await admin?.end();
  await db?.drop();
});

describe('support data (002_support.sql)', () => {
  test('holds every row of the fixture', async () => {
    const { rows } = await admin.query(
      `SELECT (SELECT count(*) FROM customers)::int AS customers, (SELECT count(*) FROM orders)::int AS orders`,
    );
    assert.deepEqual(rows[0], { customers: 10, orders: 13 });
    const statuses = await admin.query(`SELECT id, status FROM orders WHERE id IN ('13579', '24601', '86420') ORDER BY id`);
    assert.deepEqual(statuses.rows, [
      { id: '13579', status: 'Processing' },
      { id: '24601', status: 'Shipped' },
      { id: '86420', status: 'Delivered' },
    ]);
  });

  test('brigade_app reads the tables but cannot delete, insert, or change other columns', async () => {
    const refused = async (sql: string, params: unknown[] = []) => {
      await assert.rejects(
        inTransaction(pool, (client) => client.query(sql, params)),
        (error: any) => error.code === '42501',
        `expected permission denied for: ${sql}`,
      );
    };
    await refused(`DELETE FROM orders WHERE id = '24601'`);
    await refused(`DELETE FROM customers WHERE id = '1057426'`);
    await refused(`UPDATE customers SET name = 'Someone Else' WHERE id = '1213210'`);
    await refused(`UPDATE customers SET username = 'jd' WHERE id = '1213210'`);
    await refused(`UPDATE orders SET price = 0 WHERE id = '24601'`);
    await refused(`INSERT INTO orders (id, customer_id, product, quantity, price, status)
                   VALUES ('11111', '1213210', 'Free Stuff', 1, 0, 'Processing')`);
    await refused(`TRUNCATE orders`);
    const { rows } = await admin.query(`SELECT name FROM customers WHERE id = '1213210'`);
    assert.equal(rows[0].name, 'John Doe');
  });

  test('no row-level security: staff data, the same for every operator', async () => {
    const { rows } = await admin.query(
      `SELECT relname, relrowsecurity FROM pg_class WHERE relname IN ('customers', 'orders') AND relnamespace = 'public'::regnamespace ORDER BY relname`,
    );
    assert.deepEqual(rows, [
      { relname: 'customers', relrowsecurity: false },
      { relname: 'orders', relrowsecurity: false },
    ]);
  });
});

describe('get_user', () => {
  test('finds by email, phone or username', async () => {
    assert.deepEqual(await call('get_user', { key: 'email', value: 'john@gmail.com' }), JOHN);
    assert.deepEqual(await call('get_user', { key: 'phone', value: '123-456-7890' }), JOHN);
    assert.deepEqual(await call('get_user', { key: 'username', value: 'johndoe' }), JOHN);
  });

  test('matches email whatever its case', async () => {
    assert.deepEqual(await call('get_user', { key: 'email', value: 'John@Gmail.COM' }), JOHN);
  });

  test('not found', async () => {
    assert.deepEqual(await call('get_user', { key: 'email', value: 'john@example.com' }), {
      error: "Couldn't find a user with email of john@example.com",
    });
    assert.deepEqual(await call('get_user', { key: 'username', value: 'nobody' }), {
      error: "Couldn't find a user with username of nobody",
    });
    assert.deepEqual(await call('get_user', { key: 'phone', value: '000-000-0000' }), {
      error: "Couldn't find a user with phone of 000-000-0000",
    });
  });

  test('a value is data, never SQL', async () => {
    assert.deepEqual(await call('get_user', { key: 'username', value: "x' OR '1'='1" }), {
      error: "Couldn't find a user with username of x' OR '1'='1",
    });
  });
});

describe('get_order_by_id', () => {
  test('returns the order with a numeric price', async () => {
    const order = await call('get_order_by_id', { order_id: '24601' });
    assert.deepEqual(order, {
      id: '24601',
      customer_id: '1213210',
      product: 'Wireless Headphones',
      quantity: 1,
      price: 79.99,
      status: 'Shipped',
    });
    assert.equal(
      JSON.stringify(order),
      '{"id":"24601","customer_id":"1213210","product":"Wireless Headphones","quantity":1,"price":79.99,"status":"Shipped"}',
    );
  });

  test('not found', async () => {
    assert.deepEqual(await call('get_order_by_id', { order_id: '00000' }), { error: 'Order not found' });
  });
});

describe('get_customer_orders', () => {
  test("returns the customer's orders, ordered by id", async () => {
    assert.deepEqual(await call('get_customer_orders', { customer_id: '1213210' }), JOHN_ORDERS);
  });

  test('unknown customer is an error, not an empty list', async () => {
    assert.deepEqual(await call('get_customer_orders', { customer_id: '0000000' }), {
      error: "Couldn't find a user with id of 0000000",
    });
  });
});

describe('get_user_info', () => {
  test('profile and orders together', async () => {
    assert.deepEqual(await call('get_user_info', { key: 'username', value: 'johndoe' }), {
      user_info: JOHN,
      orders: JOHN_ORDERS,
    });
  });

  test('not found', async () => {
    assert.deepEqual(await call('get_user_info', { key: 'email', value: 'nobody@example.com' }), {
      error: "Couldn't find a user with email of nobody@example.com",
    });
  });
});

describe('cancel_order', () => {
  test('cancels a Processing order; a second cancel says it is already cancelled', async () => {
    assert.deepEqual(await call('cancel_order', { order_id: '13579' }), {
      status: 'Cancelled',
      message: 'Order 13579 has been successfully cancelled',
    });
    assert.equal(await orderStatus('13579'), 'Cancelled');
    assert.deepEqual(await call('cancel_order', { order_id: '13579' }), {
      error: 'Order is already cancelled.',
      status: 'Cancelled',
    });
    assert.deepEqual(await call('get_order_by_id', { order_id: '13579' }), { ...JOHN_ORDERS[0], status: 'Cancelled' });
  });

  test('refuses a Shipped order', async () => {
    assert.deepEqual(await call('cancel_order', { order_id: '24601' }), {
      error: "Order has already shipped. Can't cancel it.",
      status: 'Shipped',
    });
    assert.equal(await orderStatus('24601'), 'Shipped');
  });

  test('refuses a Delivered order', async () => {
    assert.deepEqual(await call('cancel_order', { order_id: '86420' }), {
      error: "Order has already been delivered. Can't cancel it.",
      status: 'Delivered',
    });
    assert.equal(await orderStatus('86420'), 'Delivered');
  });

  test('not found', async () => {
    assert.deepEqual(await call('cancel_order', { order_id: '99999' }), { error: 'Order not found' });
  });

  test('a cancel rolled back with its transaction leaves the order Processing', async () => {
    const client = await openTransaction();
    assert.deepEqual(await callOn(client, 'cancel_order', { order_id: '28164' }), {
      status: 'Cancelled',
      message: 'Order 28164 has been successfully cancelled',
    });
    await finish(client, 'ROLLBACK');
    assert.equal(await orderStatus('28164'), 'Processing');
  });

  test('two interleaved cancels of one order: the second waits, then sees it already cancelled', async () => {
    const first = await openTransaction();
    const second = await openTransaction();
    try {
      assert.deepEqual(await callOn(first, 'cancel_order', { order_id: '19283' }), {
        status: 'Cancelled',
        message: 'Order 19283 has been successfully cancelled',
      });
      const secondResult = callOn(second, 'cancel_order', { order_id: '19283' });
      await waitForLockWaiters(1);
      await finish(first, 'COMMIT');
      assert.deepEqual(await secondResult, { error: 'Order is already cancelled.', status: 'Cancelled' });
      await finish(second, 'COMMIT');
    } catch (error) {
      abandon(first, second);
      throw error;
    }
    assert.equal(await orderStatus('19283'), 'Cancelled');
  });

  test('many concurrent cancels of one order: exactly one succeeds', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => call('cancel_order', { order_id: '47652' })));
    const successes = results.filter((result: any) => result.status === 'Cancelled' && !('error' in result));
    assert.equal(successes.length, 1, JSON.stringify(results));
    assert.deepEqual(successes[0], { status: 'Cancelled', message: 'Order 47652 has been successfully cancelled' });
    for (const result of results.filter((r) => r !== successes[0])) {
      assert.deepEqual(result, { error: 'Order is already cancelled.', status: 'Cancelled' });
    }
    assert.equal(await orderStatus('47652'), 'Cancelled');
  });
});

describe('update_user_contact', () => {
  test('updates the phone and returns the profile with a message', async () => {
    assert.deepEqual(await call('update_user_contact', { user_id: '3924156', phone: '555-765-4321' }), {
      id: '3924156',
      name: 'Liam Nguyen',
      email: 'lnguyen@yahoo.com',
      phone: '555-765-4321',
      username: 'liamn',
      message: 'User information updated successfully',
    });
    assert.deepEqual(await call('get_user', { key: 'phone', value: '555-765-4321' }), {
      id: '3924156',
      name: 'Liam Nguyen',
      email: 'lnguyen@yahoo.com',
      phone: '555-765-4321',
      username: 'liamn',
    });
  });

  test('updates email and phone together', async () => {
    assert.deepEqual(await call('update_user_contact', { user_id: '4782901', email: 'aaliyah.davis@example.com', phone: '111-222-4444' }), {
      id: '4782901',
      name: 'Aaliyah Davis',
      email: 'aaliyah.davis@example.com',
      phone: '111-222-4444',
      username: 'adavis',
      message: 'User information updated successfully',
    });
  });

  test('refuses an email in use by another customer, in any case, and changes nothing', async () => {
    for (const email of ['priya@candy.com', 'Priya@Candy.COM']) {
      assert.deepEqual(await call('update_user_contact', { user_id: JOHN.id, email }), {
        error: 'Email already in use by another customer',
      });
    }
    assert.deepEqual(await call('update_user_contact', { user_id: JOHN.id, email: 'PRIYA@candy.com', phone: '999-999-9999' }), {
      error: 'Email already in use by another customer',
    });
    assert.deepEqual(await call('get_user', { key: 'username', value: 'johndoe' }), JOHN);
  });

  test('a customer may keep their own email, or change its case', async () => {
    assert.deepEqual(await call('update_user_contact', { user_id: JOHN.id, email: 'John@Gmail.com' }), {
      ...JOHN,
      email: 'John@Gmail.com',
      message: 'User information updated successfully',
    });
    assert.deepEqual(await call('update_user_contact', { user_id: JOHN.id, email: 'john@gmail.com' }), {
      ...JOHN,
      message: 'User information updated successfully',
    });
  });

  test('unknown user', async () => {
    assert.deepEqual(await call('update_user_contact', { user_id: '0000000', email: 'someone@example.com' }), {
      error: "Couldn't find a user with id of 0000000",
    });
    // a phone alone takes the one-statement path: the same answer
    assert.deepEqual(await call('update_user_contact', { user_id: '0000000', phone: '555-000-0000' }), {
      error: "Couldn't find a user with id of 0000000",
    });
  });

  test('an email taken by a concurrent writer is refused as in use, and the transaction stays usable', async () => {
    const first = await openTransaction();
    const second = await openTransaction();
    try {
      assert.deepEqual(await callOn(first, 'update_user_contact', { user_id: '8259147', email: 'shared@example.com' }), {
        id: '8259147',
        name: 'Megan Anderson',
        email: 'shared@example.com',
        phone: '666-777-8888',
        username: 'manderson',
        message: 'User information updated successfully',
      });
      // The second writer's check cannot see the uncommitted address; the unique index makes it wait.
      const secondResult = callOn(second, 'update_user_contact', { user_id: '1057426', email: 'SHARED@example.com' });
      await waitForLockWaiters(1);
      await finish(first, 'COMMIT');
      assert.deepEqual(await secondResult, { error: 'Email already in use by another customer' });
      // The runtime records the call in the same transaction: it must still work and commit.
      const { rows } = await second.query(`SELECT email FROM customers WHERE id = '1057426'`);
      assert.equal(rows[0].email, 'meilin@gmail.com');
      await finish(second, 'COMMIT');
    } catch (error) {
      abandon(first, second);
      throw error;
    }
    const { rows } = await admin.query(`SELECT id, email FROM customers WHERE lower(email) = 'shared@example.com'`);
    assert.deepEqual(rows, [{ id: '8259147', email: 'shared@example.com' }]);
  });
});

describe('argument schemas (src/agents/support/tools.ts)', () => {
  const issues = (name: string, args: unknown): string => {
    const parsed = specOf(name).args.safeParse(args);
    assert.equal(parsed.success, false, `${name} should refuse ${JSON.stringify(args)}`);
    return describeIssues(parsed.error!);
  };

  test('there are exactly the six contract tools, each implemented', () => {
    const names = supportTools.map((tool) => tool.name).sort();
    assert.deepEqual(names, ['cancel_order', 'get_customer_orders', 'get_order_by_id', 'get_user', 'get_user_info', 'update_user_contact']);
    assert.deepEqual(Object.keys(supportImplementations).sort(), names);
  });

  test('a bad order id', () => {
    assert.equal(issues('get_order_by_id', { order_id: '2460' }), 'order_id: must be a 5-digit order ID');
    assert.equal(issues('cancel_order', { order_id: 'abcde' }), 'order_id: must be a 5-digit order ID');
  });

  test('a bad customer id', () => {
    assert.equal(issues('get_customer_orders', { customer_id: '121321' }), 'customer_id: must be a 7-digit customer ID');
  });

  test('a bad lookup key', () => {
    assert.match(issues('get_user', { key: 'id', value: '1213210' }), /^key: /);
  });

  test('a bad phone', () => {
    assert.equal(
      issues('update_user_contact', { user_id: '1213210', phone: '555-12-34' }),
      'phone: must be a phone number in format XXX-XXX-XXXX',
    );
  });

  test('a bad email', () => {
    assert.equal(issues('update_user_contact', { user_id: '1213210', email: 'not-an-email' }), 'email: must be an email address');
  });

  test('update_user_contact with only user_id', () => {
    assert.equal(
      issues('update_user_contact', { user_id: '1213210' }),
      '(arguments): at least one of email or phone must be given besides user_id',
    );
  });

  test('good arguments pass', () => {
    assert.equal(specOf('update_user_contact').args.safeParse({ user_id: '1213210', email: 'new@example.com' }).success, true);
    assert.equal(specOf('get_user').args.safeParse({ key: 'phone', value: '123-456-7890' }).success, true);
  });
});
