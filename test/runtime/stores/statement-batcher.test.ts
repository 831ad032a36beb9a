// StatementBatcher's own rules, on a subclass whose statements are functions (the SQL of both
// batchers is tested against PostgreSQL in enqueue-batch and seal-release): items issued together
// share one statement, one key never twice in a batch, batches in key order; a shared statement
// that PostgreSQL refused (an error with a SQLSTATE: rolled back) answers each item alone; one
// whose outcome is unknown (the connection lost: it may have committed) is never run again.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { StatementBatcher, rolledBack } from '../../../runtime/index.js';

const test = suite('runtime/stores/statement-batcher');

class Recording extends StatementBatcher<string, string> {
  readonly calls: string[][] = [];
  constructor(private readonly failTogether: unknown = null) {
    super();
  }
  protected keyOf(item: string): string {
    return item.split(':')[0]!;
  }
  protected async alone(item: string): Promise<string> {
    this.calls.push([item]);
    return `alone ${item}`;
  }
  protected async together(items: string[]): Promise<string[]> {
    this.calls.push(items);
    if (this.failTogether) throw this.failTogether;
    return items.map((item) => `together ${item}`);
  }
}

const databaseError = (code: string) => Object.assign(new Error(`SQLSTATE ${code}`), { code, severity: 'ERROR' });

test('items issued together share one statement, in key order; one key never twice in a batch', async () => {
  const b = new Recording();
  const answers = await Promise.all(['t3:a', 't1:b', 't2:c', 't1:d'].map((item) => b.run(item)));
  assert.equal(answers, ['together t3:a', 'together t1:b', 'together t2:c', 'alone t1:d']);
  assert.equal(b.calls, [['t1:b', 't2:c', 't3:a'], ['t1:d']]);
  assert.equal(b.counts, { inputs: 4, statements: 2, failed: 0 });
});

test('a lone item leaves alone, at once', async () => {
  const b = new Recording();
  assert.is(await b.run('t1:x'), 'alone t1:x');
  assert.equal(b.calls, [['t1:x']]);
});

test('a shared statement PostgreSQL refused: each item alone', async () => {
  for (const code of ['23505', '40P01', '22012', '0A000', '57014']) {
    const b = new Recording(databaseError(code));
    const answers = await Promise.all(['t1:a', 't2:b'].map((item) => b.run(item)));
    assert.equal(answers, ['alone t1:a', 'alone t2:b'], code);
    assert.equal(b.counts, { inputs: 2, statements: 2, failed: 1 }, code);
  }
});

test('a shared statement whose outcome is unknown: every item rejected with its error, none run again', async () => {
  for (const error of [new Error('Connection terminated unexpectedly'), Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })]) {
    const b = new Recording(error);
    const answers = await Promise.allSettled(['t1:a', 't2:b'].map((item) => b.run(item)));
    assert.equal(answers.map((a) => a.status), ['rejected', 'rejected']);
    assert.ok(answers.every((a) => a.status === 'rejected' && a.reason === error));
    assert.equal(b.calls, [['t1:a', 't2:b']], 'no item ran again');
    assert.equal(b.counts, { inputs: 0, statements: 0, failed: 1 });
  }
});

test('rolledBack: only PostgreSQL\'s answer', () => {
  assert.ok(rolledBack(databaseError('23505')));
  assert.not.ok(rolledBack(Object.assign(new Error('x'), { code: 'ECONNRESET' })));
  assert.not.ok(rolledBack(new Error('Connection terminated')));
  assert.not.ok(rolledBack(null));
});

test.run();
