/** tap's `before` step: build the database templates every test file clones. */
import { buildPgliteTemplate, buildPostgresTemplate, postgresUrl } from './templates.ts'

const url = postgresUrl()
if (url) await buildPostgresTemplate(url)
else await buildPgliteTemplate()
