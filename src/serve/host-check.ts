import { isIP } from 'node:net';
import { hostname } from 'node:os';

/**
 * Which Host headers the server answers. A page of another site can make a browser send requests
 * to the server through DNS rebinding (its own name, made to resolve to this machine): such a
 * request names that site in its Host header, so only the names the server was bound to are
 * answered. Bound to loopback: 127.0.0.1, localhost and [::1]; bound to an address or a name: that
 * one (and the loopback names when it is loopback); bound to every address (0.0.0.0, ::): any IP
 * address, which no rebinding can put in a Host header, this machine's name and localhost.
 */
export interface HostCheck {
  /** The host names and addresses answered, as a person reads them (for the refusal). */
  names: string[];
  allows(hostHeader: string | undefined): boolean;
}

const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]'];

export function hostCheck(boundHost: string): HostCheck {
  const bound = normalise(boundHost.startsWith('[') ? boundHost : isIP(boundHost) === 6 ? `[${boundHost}]` : boundHost);
  const wildcard = bound === '0.0.0.0' || bound === '[::]' || bound === '';
  const loopback = wildcard || LOOPBACK.includes(bound) || /^127\.\d+\.\d+\.\d+$/.test(bound) || bound === 'localhost';
  const names = [...new Set([...(wildcard ? [] : [bound]), ...(loopback ? LOOPBACK : []), ...(wildcard ? [normalise(hostname())] : [])])];
  return {
    names: wildcard ? [...names, 'any IP address of this machine'] : names,
    allows(header) {
      if (!header) return false;
      const name = normalise(hostOf(header));
      if (names.includes(name)) return true;
      return wildcard && isIP(name.replace(/^\[|\]$/g, '')) !== 0;
    },
  };
}

/** The host part of a Host header (`name:port`, `[v6]:port`). */
function hostOf(header: string): string {
  const h = header.trim();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.lastIndexOf(':');
  return colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h;
}

/** Names compare without case and without a trailing dot (`localhost.` is localhost). */
function normalise(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
