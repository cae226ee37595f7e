// The workflow bundle's entry for tests with the echo agent: the app's workflows, with the echo agent
// registered in the bundle's registry too (the workflow reads its tools from there).
import './register.ts';

export * from '../../../src/workflows/index.ts';
