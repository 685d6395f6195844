import type { AppDeps } from '../deps';
import { buildRouter } from '../http/router';
import { GEN1_ROUTES } from './gen1-routes';
import { gen1TokenService } from './gen1-tokens';

/**
 * The Gen1 legacy API (docs/gen1-to-gen2.md) at root paths, beside Gen2 on the same data. Its routes run
 * the one route pipeline of Gen2 with the Gen1 token service in place of the Gen2 one: the
 * pipeline then authenticates Gen1 access tokens only (a Gen2 token is a 401 here, as a Gen1
 * token is on every Gen2 route), and the shared login and refresh issue Gen1 tokens.
 */
export function gen1Api(deps: AppDeps) {
  const gen1Deps: AppDeps = {
    ...deps,
    tokens: gen1TokenService(deps.tokens, deps.config.JWT_GEN1_AUDIENCE),
  };
  return buildRouter(GEN1_ROUTES, gen1Deps).routes();
}
