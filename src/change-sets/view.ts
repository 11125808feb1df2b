import type { Context } from 'koa';
import type { ConfigService } from '../application/service.js';
import { type ConfigView, invalidHeader } from '../http/route-module.js';
import { overlayOf, viewOf } from './overlay.js';
import { openChangeSet } from './staged.js';

/** The view of a read sent with `Change-Set: <id>`: the configuration as that change set would leave it now. */
export function changeSetView(service: ConfigService): (ctx: Context) => ConfigView | undefined {
  return (ctx) => {
    const header = ctx.get('Change-Set');
    if (header === '') return undefined;
    if (!/^[1-9][0-9]{0,15}$/.test(header)) throw invalidHeader('Change-Set must be the id of a change set');
    const id = Number(header);
    // Merged, its writes are the configuration itself; closed, they are nothing: only an open one is a view.
    openChangeSet(service.state, id);
    const deps = {
      decide: service.write.decided.bind(service.write),
      open: (sealed: string) => service.openSecret(sealed),
      at: service.now().toISOString(),
    };
    return viewOf(service.state, overlayOf(service.state, id, deps));
  };
}
