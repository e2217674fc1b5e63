import { migrateDatabase } from "../lib/db/migrate/index";

const applied = await migrateDatabase();
console.log(applied.length ? `applied: ${applied.join(", ")}` : "database is up to date");
