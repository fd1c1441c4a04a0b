import { M0001Foundation } from './m0001Foundation.ts';
import { M0002UsedNonces } from './m0002UsedNonces.ts';

/** Applied in this order; a new migration is appended, never inserted. */
export const migrations = [
  { name: 'm0001Foundation', class: M0001Foundation },
  { name: 'm0002UsedNonces', class: M0002UsedNonces },
];
