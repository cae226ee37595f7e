// `npm run revive -- <conversationId> [--force]`: brings a conversation back from PostgreSQL as a new run under
// the same workflow id (src/api/revival.ts), as its next message would. Without --force a run that looks
// healthy is left alone; with it, that run is terminated first (an operator's call: a run that answers
// nothing without its task failing). Reads the conversation's row as the login of DATABASE_URL (the app's
// role sees only a user's own rows), then acts for the conversation's user.
import { builtInCatalog } from '../src/agents/catalog.ts';
import { findConversation } from '../src/db/conversations.ts';
import { createPool } from '../src/db/pool.ts';
import { dataConverter } from '../src/protection/data-converter.ts';
import { reviveConversation } from '../src/api/revival.ts';
import { checkPostgres, connectTemporal } from '../stack/connect.ts';
import { requireSettings, runMain } from '../stack/lifecycle.ts';

// a composition root: the agents this process serves, passed down as a value
const catalog = builtInCatalog();

runMain(catalog, async ({ config, log }) => {
  const args = process.argv.slice(2);
  const force = args.includes('--force');
  const ids = args.filter((arg) => !arg.startsWith('--'));
  if (ids.length !== 1) {
    console.error('Usage: npm run revive -- <conversationId> [--force]');
    process.exit(2);
  }
  requireSettings(config, ['DATABASE_URL', 'TEMPORAL_ADDRESS'], 'npm run revive');
  await checkPostgres(config.DATABASE_URL);
  const owner = createPool(config.DATABASE_URL, { role: null, max: 1 });
  const pool = createPool(config.DATABASE_URL, { max: 2 });
  // the earlier run's input is sealed under its person's data key, found through the pool
  const { connection, client } = await connectTemporal(config.TEMPORAL_ADDRESS, config.TEMPORAL_NAMESPACE, {
    dataConverter: dataConverter(config, pool),
  });
  let code = 0;
  try {
    const db = await owner.connect();
    const row = await findConversation(db, ids[0]!).finally(() => db.release());
    if (!row) {
      console.error(`No conversation ${ids[0]}.`);
      code = 1;
    } else {
      const outcome = await reviveConversation({ catalog, config, client, pool }, row, { force });
      const was = outcome.was.state === 'ended' ? `ended (${outcome.was.status})` : outcome.was.state;
      if (!outcome.revived)
        log.info(`Conversation ${row.id}: its run is healthy (${row.workflowId}); nothing done. Use --force to restart it anyway.`);
      else {
        log.info(
          `Conversation ${row.id} revived as a new run of ${row.workflowId} (the run before: ${was}; ${outcome.closedItems} pending item(s) closed, ${outcome.answeredCalls} call(s) answered in words).`,
        );
      }
    }
  } catch (error) {
    console.error(`Could not revive ${ids[0]}: ${error instanceof Error ? error.message : String(error)}`);
    code = 1;
  } finally {
    await owner.end();
    await pool.end();
    await connection.close();
  }
  process.exit(code);
});
