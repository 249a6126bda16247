/** Who is calling: the key's user and company, and what the key may do. */
import type { Scope } from './api-keys.ts';

/** The authenticated caller of a request. */
export interface Principal {
  companyId: string;
  userId: string;
  role: 'admin' | 'agent';
  keyId: string;
  scopes: Scope[];
}
