import { useId } from 'react';
import { Button, type ButtonProps } from './button';

interface ActionButtonProps extends Omit<ButtonProps, 'disabled'> {
  /** Whether the action applies to what the screen shows, and why not. */
  availability: { allowed: boolean; reason?: string };
  /** The permission the action needs, when the operator lacks it. */
  missingPermission?: string;
  /**
   * The id of an element already showing the missing permission (one notice for several
   * buttons): the button points at it instead of repeating the sentence under itself.
   */
  permissionNoticeId?: string;
}

/** Why an account without `permission` cannot act. */
export const missingPermissionReason = (permission: string) =>
  `Your account lacks the ${permission} permission.`;

/**
 * An operator action's button. When the action does not apply or is not permitted, it is
 * disabled and says why in visible text under it (not only in a hover tooltip, which keyboard,
 * touch and screen-reader users do not get), tied to the button as its description.
 */
export function ActionButton({
  availability,
  missingPermission,
  permissionNoticeId,
  ...props
}: ActionButtonProps) {
  const hintId = useId();
  const reason = missingPermission
    ? missingPermissionReason(missingPermission)
    : availability.allowed
      ? undefined
      : availability.reason;
  const shownElsewhere = Boolean(missingPermission && permissionNoticeId);
  return (
    <span className="action-bar__item">
      <Button
        {...props}
        disabled={reason !== undefined}
        aria-describedby={reason ? (shownElsewhere ? permissionNoticeId : hintId) : undefined}
        title={reason}
      />
      {reason && !shownElsewhere && (
        <span id={hintId} className="action-hint" data-testid="action-disabled-reason">
          {reason}
        </span>
      )}
    </span>
  );
}
