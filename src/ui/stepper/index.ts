// The selection stepper, for the page to mount (see SelectionStepper's props).
export { SelectionStepper, type SelectionStepperProps, type StepperFocus, type StepperView } from './SelectionStepper';
export type { DecodeFn } from './tokens';
