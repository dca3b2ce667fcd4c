import { describe, expect, it } from 'vitest';
import { isSparkConnectUrl, readSparkConnectionString, scrubSecrets } from '../../src/dialects/spark/connection-string.js';
import { ScdError } from '../../src/errors.js';

const TOKEN = 'dapi0123456789abcdefSECRET';

describe('Spark Connect connection strings (unit: always run)', () => {
  it('reads host, port (15002 by default), TLS, user, and passes any other key through as a header', () => {
    const c = readSparkConnectionString(`sc://spark.example.com:443/;token=${TOKEN};user_id=ada;x-databricks-cluster-id=0123-456789-abc;X-Custom=Va=lue`);
    expect(c).toMatchObject({ host: 'spark.example.com', port: 443, useSsl: true, token: TOKEN, userId: 'ada', location: 'sc://spark.example.com:443' });
    expect(c.headers).toEqual({ 'x-databricks-cluster-id': '0123-456789-abc', 'x-custom': 'Va=lue' });
    const plain = readSparkConnectionString('sc://localhost');
    expect(plain).toMatchObject({ host: 'localhost', port: 15002, useSsl: false, headers: {}, location: 'sc://localhost:15002' });
    expect(plain.token).toBeUndefined();
    expect(readSparkConnectionString('sc://h:1/;use_ssl=true').useSsl).toBe(true);
    expect(readSparkConnectionString('sc://h:1;use_ssl=false').useSsl).toBe(false);
    expect(readSparkConnectionString('sc://[::1]:15003').location).toBe('sc://[::1]:15003');
    expect(isSparkConnectUrl(' SC://x')).toBe(true);
    expect(isSparkConnectUrl('postgres://x')).toBe(false);
  });

  it('makes a fresh UUID session per connection unless session_id names one', () => {
    const a = readSparkConnectionString('sc://h').sessionId;
    const b = readSparkConnectionString('sc://h').sessionId;
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
    const id = '00112233-4455-6677-8899-AABBCCDDEEFF';
    expect(readSparkConnectionString(`sc://h/;session_id=${id}`).sessionId).toBe(id.toLowerCase());
  });

  it('refuses what it cannot read in one line that shows no parameter', () => {
    const bad = [
      `http://h:1/;token=${TOKEN}`,
      `sc://h:99999/;token=${TOKEN}`,
      `sc://h:1/db;token=${TOKEN}`,
      `sc://user:${TOKEN}@h:1`,
      `sc://h:1/;${TOKEN}`,
      `sc://h:1/;token=${TOKEN};use_ssl=yes`,
      `sc://h:1/;token=${TOKEN};session_id=not-a-uuid`,
      `sc://:1/;token=${TOKEN}`,
      'sc://h:1/;token=',
    ];
    for (const url of bad) {
      let error: unknown;
      try {
        readSparkConnectionString(url);
      } catch (e) {
        error = e;
      }
      expect(error, url).toBeInstanceOf(ScdError);
      const e = error as ScdError;
      expect(e.code).toBe('USAGE');
      expect(e.oneLine()).not.toContain(TOKEN);
      expect(e.oneLine()).not.toContain('\n');
    }
  });

  it('scrubs the token, every header value and any bearer credential from a text', () => {
    const c = readSparkConnectionString(`sc://h/;token=${TOKEN};x-databricks-cluster-id=cluster-77`);
    expect(scrubSecrets(`denied for ${TOKEN} on cluster-77; authorization: Bearer other-token-xyz`, c)).toBe('denied for *** on ***; authorization: Bearer ***');
  });
});
