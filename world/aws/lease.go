package aws

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/lambdaworkflow/workflow/world"
)

// A run's lease lives on its log head (leaseOwner, leaseUntil), the item
// every append already conditions on: AppendLeased checks the owner in
// that condition, so fencing costs no write. Acquire, renew and release
// are one conditional UpdateItem each, per invocation, never per step.

var _ world.RunReader = (*World)(nil)

func leaseHeldBy(owner string) expression.ConditionBuilder {
	return expression.Name("leaseOwner").Equal(expression.Value(owner))
}

func (w *World) logHeadKey(runID string) ddbItem {
	return itemKeys{PK: runPK(runID), SK: skLogHead}.key()
}

// AcquireLease implements world.Leaser with one conditional UpdateItem. A
// retry of a request whose answer was lost finds the lease its own.
func (w *World) AcquireLease(ctx context.Context, runID string, lease world.Lease, now time.Time) (world.Lease, error) {
	held, _, err := w.AcquireLeaseAt(ctx, runID, lease, now)
	return held, err
}

// AcquireLeaseAt implements world.RunReader: AcquireLease, whose
// UpdateItem answers with the log head as written, next slot included.
func (w *World) AcquireLeaseAt(ctx context.Context, runID string, lease world.Lease, now time.Time) (world.Lease, int64, error) {
	set := expression.Set(expression.Name("leaseOwner"), expression.Value(lease.Owner)).
		Set(expression.Name("leaseUntil"), expression.Value(lease.Until.UnixMilli()))
	free := expression.Or(
		expression.AttributeNotExists(expression.Name("leaseOwner")),
		leaseHeldBy(lease.Owner),
		expression.Name("leaseUntil").LessThanEqual(expression.Value(now.UnixMilli())),
	)
	found, refused, err := w.updateIf(ctx, w.logHeadKey(runID), set, expression.AttributeExists(expression.Name(attrPK)).And(free))
	if err != nil {
		return world.Lease{}, 0, fmt.Errorf("lease run %s: %w", runID, err)
	}
	head, err := decodeHead(runID, found)
	if err != nil {
		return world.Lease{}, 0, fmt.Errorf("lease run %s: %w", runID, err)
	}
	if !refused {
		return lease, lastSlot(head), nil
	}
	held := world.Lease{Owner: head.LeaseOwner, Until: time.UnixMilli(head.LeaseUntil)}
	return held, lastSlot(head), fmt.Errorf("lease run %s: %w", runID, world.ErrLeaseHeld)
}

// RenewLease implements world.Leaser with one conditional UpdateItem.
func (w *World) RenewLease(ctx context.Context, runID string, lease world.Lease) error {
	set := expression.Set(expression.Name("leaseUntil"), expression.Value(lease.Until.UnixMilli()))
	found, refused, err := w.updateIf(ctx, w.logHeadKey(runID), set, leaseHeldBy(lease.Owner))
	if err == nil && refused {
		_, err = decodeHead(runID, found)
		err = errors.Join(world.ErrLeaseLost, err)
	}
	if err != nil {
		return fmt.Errorf("renew lease of run %s: %w", runID, err)
	}
	return nil
}

// ReleaseLease implements world.Leaser with one conditional UpdateItem,
// whose answer (the head, written or refused) holds the next slot. A
// suspension is recorded on condition that the log is as the releaser saw
// it; if it grew meanwhile, a second UpdateItem makes the run due now.
func (w *World) ReleaseLease(ctx context.Context, runID string, r world.Release) (int64, error) {
	update := expression.Remove(expression.Name("leaseOwner")).Remove(expression.Name("leaseUntil"))
	cond := leaseHeldBy(r.Owner)
	if r.Suspended {
		update = w.setDue(update.Remove(expression.Name("requeued")), runID, r.Wake)
		cond = cond.And(expression.Name("next").Equal(expression.Value(r.Seen + 1)))
	} else {
		update = w.setDue(update, runID, w.now())
	}
	found, refused, err := w.updateIf(ctx, w.logHeadKey(runID), update, cond)
	if err != nil {
		return 0, fmt.Errorf("release lease of run %s: %w", runID, err)
	}
	head, err := decodeHead(runID, found)
	if err != nil {
		return 0, fmt.Errorf("release lease of run %s: %w", runID, errors.Join(world.ErrLeaseLost, err))
	}
	if refused && r.Suspended && head.LeaseOwner == r.Owner {
		// Still ours: the log grew after the releaser's last look.
		return w.ReleaseLease(ctx, runID, world.Release{Owner: r.Owner, Seen: r.Seen})
	}
	if refused {
		// Also what the SDK's retry of a release whose answer was lost
		// sees; the caller treats both alike.
		return head.Next - 1, fmt.Errorf("release lease of run %s: %w", runID, world.ErrLeaseLost)
	}
	return head.Next - 1, nil
}

// decodeHead decodes a log head read back from a write; none means the run
// does not exist.
func decodeHead(runID string, av ddbItem) (logHead, error) {
	var head logHead
	if av == nil {
		return head, world.ErrRunNotFound
	}
	if err := unmarshalItem(av, &head); err != nil {
		return head, fmt.Errorf("decode log head of run %s: %w", runID, err)
	}
	return head, nil
}
