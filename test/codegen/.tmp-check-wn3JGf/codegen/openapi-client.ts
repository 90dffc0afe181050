/**
 * openapi.yaml → src/generated/openapi/paths.ts: the `paths`/`components` types a typed client
 * (openapi-fetch) is built on. The contract tests drive the server through that client, the way an
 * SDK generated from openapi.yaml would.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'
import { banner, type GeneratedFile } from './generated-file.ts'

export async function generateOpenApiClientFiles(root: string): Promise<GeneratedFile[]> {
  const ast = await openapiTS(pathToFileURL(join(root, 'openapi.yaml')), { alphabetize: false })
  return [
    {
      path: 'src/generated/openapi/paths.ts',
      contents: `${banner('codegen/openapi-client.ts (openapi-typescript)', 'openapi.yaml')}/* eslint-disable */\n${astToString(ast)}`,
    },
  ]
}
