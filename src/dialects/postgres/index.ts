export { postgresDialect } from './postgres-dialect.js';
export { PostgresDriver, type PostgresOptions } from './postgres-driver.js';
