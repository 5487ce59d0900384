import type { MigrationInterface } from 'typeorm';
import { CreateFoundation1795940285941 } from './1795940285941-CreateFoundation';
import { CreateWorkItems1795943154952 } from './1795943154952-CreateWorkItems';
import { CreateFiles1795943688912 } from './1795943688912-CreateFiles';
import { CreateSessions1795946504936 } from './1795946504936-CreateSessions';
import { CreateSkills1795948800228 } from './1795948800228-CreateSkills';
import { CreateMemoryStores1795948827054 } from './1795948827054-CreateMemoryStores';
import { CreateVaults1796125827197 } from './1796125827197-CreateVaults';
import { CreateWebhooks1796126207659 } from './1796126207659-CreateWebhooks';
import { CreateDeployments1796126714105 } from './1796126714105-CreateDeployments';
import { CreateMcpCalls1796126929314 } from './1796126929314-CreateMcpCalls';
import { AddDeploymentVaults1796135262423 } from './1796135262423-AddDeploymentVaults';
import { CreateSkillVersionFiles1796143000000 } from './1796143000000-CreateSkillVersionFiles';
import { AddSessionPromptInputs1796150000000 } from './1796150000000-AddSessionPromptInputs';
import { CreateSessionThreads1796160000000 } from './1796160000000-CreateSessionThreads';
import { AddWorkClaimIndexes1796323337434 } from './1796323337434-AddWorkClaimIndexes';
import { AddVaultCredentialRefreshClaims1796661162194 } from './1796661162194-AddVaultCredentialRefreshClaims';
import { AddSessionTurnsIndex1796662908196 } from './1796662908196-AddSessionTurnsIndex';
import { CreateIdempotencyKeys1796700000000 } from './1796700000000-CreateIdempotencyKeys';
import { CreateSchemaCompatibility1796800000000 } from './1796800000000-CreateSchemaCompatibility';
import { CreateAuditLog1796800000001 } from './1796800000001-CreateAuditLog';

/** Every migration, in order, as an imported array. Landed migrations are immutable. */
export const MIGRATIONS: Array<new () => MigrationInterface> = [
  CreateFoundation1795940285941,
  CreateWorkItems1795943154952,
  CreateFiles1795943688912,
  CreateSessions1795946504936,
  CreateSkills1795948800228,
  CreateMemoryStores1795948827054,
  CreateVaults1796125827197,
  CreateWebhooks1796126207659,
  CreateDeployments1796126714105,
  CreateMcpCalls1796126929314,
  AddDeploymentVaults1796135262423,
  CreateSkillVersionFiles1796143000000,
  AddSessionPromptInputs1796150000000,
  CreateSessionThreads1796160000000,
  AddWorkClaimIndexes1796323337434,
  AddVaultCredentialRefreshClaims1796661162194,
  AddSessionTurnsIndex1796662908196,
  CreateIdempotencyKeys1796700000000,
  CreateSchemaCompatibility1796800000000,
  CreateAuditLog1796800000001,
];
