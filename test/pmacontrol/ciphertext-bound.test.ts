import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ciphertextBound, ciphertextLength } from '../../src/pmacontrol/crypt.js';

/**
 * A column's room for a ciphertext is checked against a bound made without compressing (the write
 * path's check): the bound is never below the ciphertext PmaControl's scheme makes, however little
 * the value compresses, whatever its characters.
 */
test('the ciphertext bound is never below the ciphertext, for incompressible, repetitive and non-ASCII values', () => {
  const values = [''];
  for (let n = 0; n < 1500; n += 7) {
    values.push(randomBytes(n).toString('latin1'), randomBytes(n).toString('base64'), 'ü€𝄞'.repeat(n % 200));
  }
  for (const value of values) {
    const exact = ciphertextLength(value);
    assert.ok(ciphertextBound(value) >= exact, `${value.length} characters: bound below ${exact}`);
  }
  // Near enough to be of use: a 100-character password is settled by the bound for a column of 200.
  assert.ok(ciphertextBound(randomBytes(75).toString('base64')) <= 200);
});

test.run();
