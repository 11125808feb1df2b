import type { Logger } from 'pino';
import { type ConfigService, type ParseWrite, StartRefused } from '../application/service.js';
import type { Config } from '../config.js';
import { createPmaControlCrypt, readPmaControlCryptKey } from './crypt.js';
import type { PmaControlDatabase } from './database.js';
import { PmaControlProjection } from './projection.js';
import { pmacontrolRules } from './rules.js';

/**
 * PmaControl on this service (section 14), a wing of its own: its ciphertexts (crypt.ts), its tables
 * read (tables.ts) and written (rows.ts, projection.ts, behind database.ts), drift, its push, the
 * Ansible inventory, its connection file, its routes, OpenAPI operations and commands. What
 * `main.ts` plugs in (and the adapter of its database, mariadb-tables.ts, loaded only when configured):
 */
export type { PmaControlDatabase } from './database.js';
export type { PmaControlProjection } from './projection.js';
export { pmacontrolRoutes } from './routes.js';

/**
 * PmaControl's ciphertexts opened (`is_password_crypted` on a write), with the key of
 * PMACONTROL_CRYPT_KEY_FILE: read at start, so that a wrong path stops the start rather than a write.
 */
export function pmacontrolOpener(config: Config): ((ciphertext: string) => string) | undefined {
  if (!config.pmacontrolCryptKeyFile) return undefined;
  try {
    const crypt = createPmaControlCrypt(readPmaControlCryptKey(config.pmacontrolCryptKeyFile));
    return (ciphertext) => crypt.decrypt(ciphertext);
  } catch (error) {
    throw new StartRefused(
      `PMACONTROL_CRYPT_KEY_FILE ${config.pmacontrolCryptKeyFile} cannot be used: ${(error as Error).message}`,
    );
  }
}

/** The URL of PmaControl's database (PMACONTROL_DB_URL) as mysql2 takes it; a start with a malformed one is refused. */
export function pmacontrolUrl(config: Config): string | undefined {
  if (!config.pmacontrol) return undefined;
  if (!/^(mysql|mariadb):\/\/[^/]+\/[^/?#]+/.test(config.pmacontrol.url)) {
    throw new StartRefused('PMACONTROL_DB_URL must be mysql://user:password@host:port/database');
  }
  if (!config.pmacontrolCryptKeyFile) {
    throw new StartRefused(
      "PMACONTROL_DB_URL needs PMACONTROL_CRYPT_KEY_FILE: passwords are written into PmaControl's tables as its ciphertexts",
    );
  }
  return config.pmacontrol.url.replace(/^mariadb:/, 'mysql:');
}

/** What the projection into PmaControl's tables is made of, besides the configuration. */
export interface ProjectionParts {
  service: ConfigService;
  database: PmaControlDatabase;
  logger: Logger;
  parse: ParseWrite;
  /** Registers a gauge of the instance's metrics. */
  gauge: (name: string, help: string, read: () => number) => void;
}

/**
 * The projection into PmaControl's tables (PMACONTROL_DB_URL), to be started once the service serves,
 * with its gauges: how far behind the log it is, and whether this instance writes.
 */
export function pmacontrolProjection(config: Config, parts: ProjectionParts): PmaControlProjection {
  const crypt = createPmaControlCrypt(readPmaControlCryptKey(config.pmacontrolCryptKeyFile!));
  const { leaseMs, driftMs } = config.pmacontrol!;
  const { service, database, parse } = parts;
  const logger = parts.logger.child({ component: 'pmacontrol' });
  const projection = new PmaControlProjection({ service, database, crypt, logger, leaseMs, driftMs, parse });
  service.write.addRules(pmacontrolRules(projection, (sealed) => service.write.openSealed(sealed)));
  parts.gauge(
    'pmacontrol_tables_lag_events',
    "Events not yet written into PmaControl's tables (PMACONTROL_DB_URL), as this instance knows",
    () => projection.status().lag,
  );
  parts.gauge(
    'pmacontrol_tables_applying',
    "1 while this instance holds the lease and writes PmaControl's tables",
    () => (projection.status().applying ? 1 : 0),
  );
  return projection;
}
