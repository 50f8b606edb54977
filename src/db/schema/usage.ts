import { integer, pgTable, primaryKey, real, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Each server's usage, sampled each minute by one replica: `minute` rows for the last day, folded
 * into `hour` rows kept 30 days (older rows are deleted), so the table stays bounded by the fleet's
 * size. CPU (millicores) and memory (MiB) are null where the cluster has no metrics API.
 */
export const serverUsage = pgTable(
  'server_usage',
  {
    serverName: text('server_name').notNull(),
    resolution: text('resolution', { enum: ['minute', 'hour'] }).notNull(),
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull(),
    playersAvg: real('players_avg').notNull(),
    playersMax: integer('players_max').notNull(),
    cpuMilli: integer('cpu_milli'),
    memoryMib: integer('memory_mib'),
    samples: integer('samples').notNull(),
  },
  (t) => [primaryKey({ columns: [t.serverName, t.resolution, t.at] })],
);
