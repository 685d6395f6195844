import { useId } from 'react';
import { Button, type ButtonProps } from './button';

interface ActionButtonProps extends Omit<ButtonProps, 'disabled'> {
  /** Whether the action applies to what the screen shows, and why not. */
  availability: { allowed: boolean; reason?: string };
  /** The permission the action needs, when the operator lacks it. */
  missingPermission?: string;
}

/**
 * An operator action's button. When the action does not apply or is not permitted, it is
 * disabled and says why: as its tooltip and, for screen readers, as its description.
 */
export function ActionButton({ availability, missingPermission, ...props }: ActionButtonProps) {
  const hintId = useId();
  const reason = missingPermission
    ? `Your account lacks the ${missingPermission} permission.`
    : availability.allowed
      ? undefined
      : availability.reason;
  return (
    <span className="action-bar__item">
      <Button
        {...props}
        disabled={reason !== undefined}
        aria-describedby={reason ? hintId : undefined}
        title={reason}
      />
      {reason && (
        <span id={hintId} className="visually-hidden">
          {reason}
        </span>
      )}
    </span>
  );
}
