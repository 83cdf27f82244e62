/**
 * What a generate request asks for, once parsed: the adapters build it, the predictions service runs it, and the
 * skill-domain step rewrites it — a module of its own so that neither of those two imports the other for it.
 */
import type { PredictionKind, PredictionRequest } from '../../domain/prediction';
import type { SkillReference } from '../../domain/skill';
import type { InputSources } from '../inputs/resolve-input';

export interface GenerateCommand extends InputSources {
  kind: PredictionKind;
  model: string;
  domain: string | null;
  callbackUrl: string | null;
  request: PredictionRequest;
  /** `config.skills`: with no domain, their instructions and schema act as a dynamic domain. */
  skills?: SkillReference[];
}
