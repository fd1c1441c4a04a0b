import { loadSettings } from '../../config/settings.ts';
import { migrate, openOrm } from '../db/orm.ts';

/** `npm run migrate`: applies pending migrations and exits. */
const settings = loadSettings();
const orm = await openOrm(settings.databaseUrl);
await migrate(orm);
await orm.close();
