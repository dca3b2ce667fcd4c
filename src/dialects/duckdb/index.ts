export { duckdbDialect } from './duckdb-dialect.js';
export { DuckDBDriver } from './duckdb-driver.js';
