import { aliases } from './aliases/resource.js';
import { approvals } from './approvals/resource.js';
import { changeSetOperations, changeSets } from './change-sets/resource.js';
import { clients } from './clients/resource.js';
import { environments } from './environments/resource.js';
import { eventRules } from './event-rules/resource.js';
import { policies } from './policies/resource.js';
import { servers } from './servers/resource.js';
import type { Link, Resource } from './shared/declaration.js';
import { sshKeys } from './ssh-keys/resource.js';
import { storageAreas } from './storage-areas/resource.js';
import { tags } from './tags/resource.js';
import { tokens } from './tokens/resource.js';

/** Every configuration resource, in the order lists and documents show them. */
export const RESOURCES = {
  tags,
  clients,
  environments,
  aliases,
  'storage-areas': storageAreas,
  servers,
  'ssh-keys': sshKeys,
  'event-rules': eventRules,
  policies,
} as const;

export type ResourceName = keyof typeof RESOURCES;
export const RESOURCE_NAMES = Object.keys(RESOURCES) as ResourceName[];

export const isResourceName = (name: string): name is ResourceName => Object.hasOwn(RESOURCES, name);

/** Only admins see or change it (event rules): it is not part of the configuration. */
const adminOnly = (name: ResourceName) => (RESOURCES[name] as Resource).declaration.scope === 'admin';

/** The configuration: every resource but the admins' own (event rules), as export, import and the differences see it. */
export const CONFIGURATION_NAMES = RESOURCE_NAMES.filter((name) => !adminOnly(name));

export const isConfigurationName = (name: string): name is ResourceName => isResourceName(name) && !adminOnly(name);

/** The collections whose entries and changes only admins see: the tokens, and the resources of scope `admin`. */
export const ADMIN_COLLECTIONS: readonly string[] = ['tokens', ...RESOURCE_NAMES.filter(adminOnly)];

/** A resource by its URL name, as the shared machinery sees it. */
export function resourceOf(name: string): Resource {
  if (!isResourceName(name)) throw new Error(`unknown resource ${name}`);
  return RESOURCES[name];
}

/** Everything the state keeps entries of: the configuration's resources, the tokens, approvals and change sets. */
export const COLLECTIONS = {
  ...RESOURCES,
  tokens,
  approvals,
  'change-sets': changeSets,
  'change-set-operations': changeSetOperations,
} as const;
export type CollectionName = keyof typeof COLLECTIONS;
export const COLLECTION_NAMES = Object.keys(COLLECTIONS) as CollectionName[];

export const isCollectionName = (name: string): name is CollectionName => Object.hasOwn(COLLECTIONS, name);

/** Any collection by its name, as the fold and the read models see it. */
export function collectionOf(name: string): Resource {
  if (!isCollectionName(name)) throw new Error(`unknown collection ${name}`);
  return COLLECTIONS[name];
}

/** Every reference to `target`, from whichever resource declares it. */
export function referencesTo(target: CollectionName): Link[] {
  return COLLECTION_NAMES.flatMap((name) =>
    COLLECTIONS[name].references.filter((link) => link.reference.target === target),
  );
}

/**
 * The resources with each one after every resource it references (an import creates them in this
 * order), the others in the order of RESOURCES; a cycle of references is refused when this loads.
 */
export function referenceOrder(): ResourceName[] {
  const order: ResourceName[] = [];
  const placed = (name: ResourceName) => order.includes(name);
  while (order.length < RESOURCE_NAMES.length) {
    const next = RESOURCE_NAMES.find(
      (name) =>
        !placed(name) &&
        RESOURCES[name].references.every(
          (link) => link.reference.target === name || placed(link.reference.target as ResourceName),
        ),
    );
    if (!next)
      throw new Error(`the references between ${RESOURCE_NAMES.filter((n) => !placed(n)).join(', ')} form a cycle`);
    order.push(next);
  }
  return order;
}

for (const name of RESOURCE_NAMES) {
  for (const link of RESOURCES[name].references) {
    if (!isResourceName(link.reference.target)) {
      throw new Error(`${name}.${link.field} references an unknown resource ${link.reference.target}`);
    }
  }
}
