import { Model, snakeCaseMappers, type ColumnNameMappers } from 'objection';

/** Base of every model: snake_case columns, camelCase properties. */
export class BaseModel extends Model {
  static override get columnNameMappers(): ColumnNameMappers {
    return snakeCaseMappers();
  }
}

/** Base of soft-deleted domain rows: id, created, lastModified, deleted. */
export class EntityModel extends BaseModel {
  id!: number;
  created!: Date;
  lastModified!: Date | null;
  deleted!: Date | null;
}
