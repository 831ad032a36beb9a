import { createDirectoryStore, type DirectoryStoreOptions } from './directory-store.js';
import type { ObjectStore } from './object-store.js';
import { createS3Store, type S3StoreOptions } from './s3-store.js';

/** `objects.*` of the service config, after the config module resolved paths and defaults. */
export type ObjectStoreConfig = ({ driver: 'directory' } & DirectoryStoreOptions) | ({ driver: 's3' } & S3StoreOptions);

export function createObjectStore(config: ObjectStoreConfig): ObjectStore {
  switch (config.driver) {
    case 'directory':
      return createDirectoryStore({ directory: config.directory, ...(config.fsync === undefined ? {} : { fsync: config.fsync }) });
    case 's3': {
      const { driver: _driver, ...options } = config;
      return createS3Store(options);
    }
    default: {
      const unknown: never = config;
      throw new Error(`unknown object store driver: ${String((unknown as { driver?: unknown }).driver)}`);
    }
  }
}
