import { describe, expect, it } from 'vitest';
import { verifyCommandLine } from '../../../src/cli/main.js';

describe("the load summary's verify command", () => {
  it("is the load's arguments after verify, quoted for a shell only where needed", () => {
    expect(verifyCommandLine(['orders.csv', '--table', 'Orders', '--types', 'total:N,paid:BOOL'])).toBe(
      'ddb-spread verify orders.csv --table Orders --types total:N,paid:BOOL',
    );
    expect(verifyCommandLine(['my file.csv', '--delimiter', ';', '--table', "O'Brien"])).toBe(
      `ddb-spread verify 'my file.csv' --delimiter ';' --table 'O'\\''Brien'`,
    );
  });
});
