package aws

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaworkflow/workflow/world"
)

// claimRounds bounds how often ClaimHook re-decides after the token changed
// under it; each round means another writer changed the token meanwhile.
const claimRounds = 8

// ClaimHook implements world.Store. A free token is taken by a put on
// condition that the item does not exist. A taken one is judged from the
// record the refusal returns; a takeover (forced, or of a hook past its
// retention) replaces that record on condition that it is still the same
// claim.
//
// A retry after a lost response finds the World's own claim and reports
// success; a takeover then returns a zero previous Hook.
func (w *World) ClaimHook(ctx context.Context, h world.Hook, force bool) (world.Hook, error) {
	if len(hookPK(h.Token)) > maxPartitionKey {
		return world.Hook{}, fmt.Errorf("claim hook: a token of %d bytes is longer than the %d the AWS World can store", len(h.Token), maxPartitionKey-len(hookPK("")))
	}
	av, err := marshalItem(hookItem{itemKeys: itemKeys{PK: hookPK(h.Token), SK: skHook}, Hook: h, Claim: rand.Text()})
	if err != nil {
		return world.Hook{}, fmt.Errorf("claim hook %s: %w", h.Token, err)
	}
	cond := expression.AttributeNotExists(expression.Name(attrPK))
	var prev world.Hook
	for range claimRounds {
		found, refused, err := w.putIf(ctx, av, cond)
		if err != nil {
			return world.Hook{}, fmt.Errorf("claim hook %s: %w", h.Token, err)
		}
		if !refused {
			return prev, nil
		}
		if found == nil { // removed since: claim it as a free token
			cond, prev = expression.AttributeNotExists(expression.Name(attrPK)), world.Hook{}
			continue
		}
		var held hookItem
		if err := unmarshalItem(found, &held); err != nil {
			return world.Hook{}, fmt.Errorf("claim hook %s: decode holder: %w", h.Token, err)
		}
		if !held.Disposed && held.RunID == h.RunID && held.CorrelationID == h.CorrelationID {
			return world.Hook{}, nil
		}
		if world.HookBlocks(held.Hook, h, time.Now()) && !force {
			return held.Hook, fmt.Errorf("claim hook %s: %w", h.Token, world.ErrHookConflict)
		}
		cond, prev = expression.Name("claim").Equal(expression.Value(held.Claim)), held.Hook
	}
	return world.Hook{}, fmt.Errorf("claim hook %s: the token changed %d times while claiming it", h.Token, claimRounds)
}

// GetHook implements world.Store. A disposed hook past its retention is
// gone, whether or not DynamoDB's TTL has deleted its item yet.
func (w *World) GetHook(ctx context.Context, token string) (world.Hook, error) {
	if len(hookPK(token)) > maxPartitionKey {
		// No such token can have been claimed; DynamoDB would refuse the key.
		return world.Hook{}, fmt.Errorf("hook token of %d bytes: %w", len(token), world.ErrHookNotFound)
	}
	out, err := w.ddb.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      &w.opts.Table,
		Key:            itemKeys{PK: hookPK(token), SK: skHook}.key(),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return world.Hook{}, fmt.Errorf("get hook %s: %w", token, err)
	}
	var item hookItem
	if out.Item != nil {
		if err := unmarshalItem(out.Item, &item); err != nil {
			return world.Hook{}, fmt.Errorf("get hook %s: decode: %w", token, err)
		}
	}
	if out.Item == nil || (item.Disposed && !item.RetainUntil.After(time.Now())) {
		return world.Hook{}, fmt.Errorf("hook %s: %w", token, world.ErrHookNotFound)
	}
	return item.Hook, nil
}

// DisposeHook implements world.Store: a conditional delete, or with a
// retention a conditional update that also sets the item's TTL.
func (w *World) DisposeHook(ctx context.Context, token, runID string, retainUntil time.Time) error {
	owned := expression.Name("runId").Equal(expression.Value(runID))
	key := itemKeys{PK: hookPK(token), SK: skHook}.key()
	var (
		held    ddbItem
		refused bool
		err     error
	)
	if retainUntil.IsZero() {
		held, refused, err = w.deleteIf(ctx, key, expression.AttributeNotExists(expression.Name(attrPK)).Or(owned))
	} else {
		// TTL has one-second resolution: round up so the item outlives its
		// retention.
		expires := retainUntil.Add(time.Second - 1).Unix()
		held, refused, err = w.updateIf(ctx, key,
			expression.Set(expression.Name("disposed"), expression.Value(true)).
				Set(expression.Name("retainUntil"), expression.Value(retainUntil)).
				Set(expression.Name(attrExpiresAt), expression.Value(expires)),
			owned)
	}
	switch {
	case err != nil:
		return fmt.Errorf("dispose hook %s: %w", token, err)
	case refused && held != nil:
		return fmt.Errorf("dispose hook %s: %w", token, world.ErrHookNotOwner)
	}
	return nil // disposed, or no such hook: nothing to dispose
}
