export * from './skill-archive';
export * from './skill-bundle';
export * from './skill-form';
export * from './skill.view';
export * from './skills.controller';
export * from './skills.service';
export * from './skills.settings';
export * from './upload-skill.usecase';
