/** Builds the database templates every test file clones (run by prepare-databases.ts, in a worker). */
import { buildPgliteTemplate, buildPostgresTemplate, postgresUrl } from './templates.ts'

const url = postgresUrl()
if (url) await buildPostgresTemplate(url)
else await buildPgliteTemplate()
