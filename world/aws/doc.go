// Package aws is the world.World on AWS: runs, event logs, hook tokens and
// live streams in one DynamoDB table, work in an SQS standard queue, large
// payloads and closed streams in an S3 bucket.
//
// # Configuration
//
// FromEnv reads WORKFLOW_TABLE, WORKFLOW_QUEUE_URL and WORKFLOW_BUCKET and
// configures the SDK the usual way (AWS_REGION, credentials, and
// AWS_ENDPOINT_URL to point every client at an emulator; S3 then uses
// path-style addressing). New takes an aws.Config and Options. Bootstrap
// creates the three resources for local runs and tests
// (scripts/emulator.sh starts MiniStack on 127.0.0.1:4566).
//
// # Table layout
//
// One table, key (pk, sk), both strings:
//
//	pk              sk                    item
//	run#<id>        run                   the run (world.Run, JSON names), its listing keys
//	                                      (created, createdShard, workflowShard: listing.go)
//	run#<id>        ev#<slot, 20 digits>  an event
//	run#<id>        ev#head               log head: next free slot, finished, lease owner and expiry,
//	                                      due time (overdue.go)
//	run#<id>        in#<message id>       a message waiting in the run's inbox
//	hook#<token>    hook                  a hook token's holder
//	stream#<name>   chunk#<index>         a live stream chunk
//	stream#<name>   chunk#head            stream head: next index, closed, object
//	dedup#<key>     dedup                 a waiting message's DedupKey
//
// "ev#head" sorts after every event and "chunk#head" after every chunk, so
// one Query returns a log's events after a slot followed by its head, whose
// presence says the run exists (Events), or a stream's chunks followed by
// its state (ReadStream). The run item sorts right after the head, so
// GetRun reads both in one Query: Run.LastSlot is the head's next slot
// minus one, and no append writes the run item just to keep it (the run
// item is projected into the listing indexes). Runs are listed through two indexes, both sorted
// by write time then ID, newest first and write-sharded (listing.go):
// runs-by-created-shard (every run, partition createdShard "runs#<k>")
// and runs-by-workflow-shard (ListRuns with a Workflow filter, partition
// workflowShard "<workflow>#<k>"), k one of 16 by a hash of the run ID;
// a listing queries the 16 partitions in parallel and merges them. They
// project only what the filters read; the page's runs are then read from
// the table with their heads. Status and attribute filters are applied
// while reading: a FilterExpression would be charged the same reads.
// Indexes are eventually consistent on AWS, so a run can take a moment to
// be listed. A third, runs-by-due, sparse and keys only, holds the log
// heads of runs due to move, for the stuck-run check (overdue.go).
// The TTL attribute is expiresAt.
//
// # Appends
//
// An append is one TransactWriteItems: a Put per event on condition that
// its slot is free, an Update of the log head on condition that it points
// at the writer's slot and the run is not finished, and the RunUpdate
// applied to the run item. A refusal is explained from the cancellation
// reasons and the head the Update returns on failure (ALL_OLD): a taken
// slot (the missed events are then read with a consistent Query), a
// finished run, a missing run. AppendLeased adds "leaseOwner = writer" to
// the head's condition, and a head held by another owner answers
// ErrLeaseLost: the run's lease lives on its head so that fencing a
// replaced invocation costs nothing beyond the append. Acquiring,
// renewing and releasing the lease are one conditional UpdateItem of the
// head each; the release's answer carries the head's next slot. A refused condition is never retried: the
// retryer is told so, and only a cancellation that reports nothing but
// TransactionConflict is tried again. A transaction holds at most 100
// items, so CreateRun takes at most 98 events; AppendEvents packs up to
// four consecutive events into each item when more than 98 come at once
// (packed.go), so it takes 392 (MaxAppend) in one transaction.
//
// # Inbox
//
// A hook resume does not append to the log: every resumer of a busy hook
// would race every other for the log's next slot, each lost slot a
// refused transaction and a Query, so a hundred concurrent resumes cost
// thousands of calls. Deliver puts the message as an item of its own,
// in#<resume ID>, on condition that it does not exist (a redelivery
// changes nothing), with no transaction: a transaction with a condition
// on the log head would make concurrent deliveries conflict. The run's
// lease holder folds the waiting messages into the log with AppendFolded:
// the append's transaction plus a Delete of each message on condition
// that it is still there, so a message is in the log or in the inbox,
// never both (Withdraw, a conditional DeleteItem, is how a resumer that
// lost a race with a takeover takes its message back; a fold that meets a
// withdrawn message writes nothing and answers ErrInboxChanged). A
// message takes two items of the transaction, so one fold takes at most
// 49. "in#" sorts between "ev#head" and "run", so GetRun's one Query
// counts the waiting messages (Run.Inbox), and ExpireRun stamps those a
// finished run left. A message carries its delivery time as due, so it
// sits in the due index until folded: a run waiting only for hooks whose
// resumer's wake-up was lost is found overdue (overdue.go).
//
// # Retries and lost answers
//
// The SDK's standard retryer retries throttling, 5xx and connection errors,
// up to five attempts. A retry can repeat a write that AWS carried out but
// whose answer was lost, and every write is safe against that:
// transactions carry a ClientRequestToken, which makes a repeat replay the
// first outcome; conditional puts (hook claims, dedup markers, the stream
// object) recognise their own item in the refusal and report success;
// deletes and the other updates are idempotent. Repeated SQS sends are
// duplicate messages, which at-least-once delivery allows. See http.go for
// an SDK/net/http interplay that made such retries common, and its guard.
//
// # Large payloads
//
// DynamoDB caps an item at 400 KB and a transaction at 4 MB. An event
// payload or chunk over 350 KB, or a run's Input, Output or Error over
// 100 KB (three share an item), goes to S3 under blobs/ with a random key,
// and the item keeps the key; the largest further payloads of a
// transaction go too until it carries at most 2 MB inline. Readers fetch
// them transparently. A write refused after its upload deletes the object.
//
// # Hooks
//
// A token is claimed by a put on condition that its item does not exist.
// A refusal returns the holder: the same run and correlation is a harmless
// re-claim; a live holder or a retained disposed hook is a conflict unless
// forced; a forced claim or one of a hook past its retention replaces the
// item on condition that it still holds the claim ID it was judged by.
// DisposeHook with a retention sets disposed, retainUntil and the TTL;
// readers treat a hook past retainUntil as gone, whenever TTL deletes it.
//
// # Queue
//
// A message is world.Message as JSON. DeliverAt becomes DelaySeconds,
// rounded up to a whole second and capped at 900: a message due later
// arrives early, which world.Message allows, and the runtime enqueues it
// again for the rest. Visibility timeouts are rounded up to whole seconds.
// The SDK does not send zero delays or waits, so the queue's own default
// delay and receive wait must be 0 (Bootstrap makes them so). Receive long
// polls for up to 20 s, and never past its context's deadline. SQS
// finishes a long poll whose client has gone, and hides what it takes for
// the visibility timeout, so a poll its caller abandons (a worker that
// stops) is left to run out and releases what it takes at once (Release:
// ChangeMessageVisibility to 0); Close waits for such polls.
//
// Standard queues do not deduplicate, so a DedupKey is a marker item, and
// a marker is trusted only once its message is known to be sent. Enqueue
// puts the marker as pending (on condition that no sent, unexpired marker
// holds the key), sends, then marks it sent (on condition that it still
// holds this Enqueue's claim); only a sent marker drops a later Enqueue
// of the key. A crash, a failed send or a cancelled context between the
// put and the send leaves a pending marker, which the next Enqueue of the
// key takes over, sending again: so a retried Start either queues its run
// or returns the send's error, and a redelivered invocation that suspends
// again re-sends the wake-up a crash kept from being sent. The price is a
// duplicate message when a crash came after the send, which at-least-once
// delivery allows. Marking sent runs on the caller's context without its
// cancellation (bounded to 5 s): the message is queued either way. A
// delivery deletes the marker (Receive does; a Lambda handler fed by an
// SQS event source decodes bodies with DecodeMessage and must call
// Delivered); a marking that comes after the delivery finds no marker and
// creates none. A marker also lapses 10 s after its message became
// visible, which bounds the harm of a handler that skipped Delivered.
//
// # Streams
//
// Parts of an unfinished multipart upload cannot be read, and every part
// but the last must be at least 5 MiB, so S3 alone cannot serve a stream
// while it is written. The live path is DynamoDB: WriteStream puts each
// chunk as an item chunk#<index> in one transaction (up to 99 chunks) with
// an Update of the stream head on condition that its next index is where
// the writer thought and the stream is open. The World remembers each
// stream's next index, so a writer's appends cost one transaction; another
// writer's appends make the head refuse, and its ALL_OLD copy says where
// the stream now ends. ReadStream is one consistent Query from the index
// asked through the head, so a reader sees a chunk as soon as its
// transaction commits.
//
// CloseStream marks the head closed, then compacts: it writes the chunks,
// as frames of uvarint length and bytes, into one object under streams/
// (a PutObject, or a multipart upload of 8 MiB parts when larger), names
// the object in the head on condition that no other close named one first,
// and deletes the chunk items with BatchWriteItem. Readers that find the
// object read it; a read that catches the deletion half done finds the
// head already naming the object and reads again. Closing again completes
// an interrupted compaction. The bucket's lifecycle rule aborts multipart
// uploads left incomplete.
//
// # Retention
//
// A finished run expires Options.Retention after it ended (retention.go;
// 30 days unless set, world.KeepForever never): every item of it carries
// the TTL attribute expiresAt, and readers (GetRun, Events, ListRuns,
// ReadStream, GetHook) treat an item past it as gone, since TTL deletes
// within days. The append that finishes the run stamps the run, its log
// head and the events it writes, inside the transaction it makes anyway.
// ExpireRun, which the engine calls after the end is written (and again
// on a later delivery for the finished run), stamps the rest: one
// consistent Query of the run's partition, each event not yet stamped put
// again with expiresAt (BatchWriteItem, 25 a call: one standard write unit
// per KB of event, half what appending it cost), each of the run's stream
// heads (UpdateItem), and each S3 object of the run copied onto itself
// with the tag workflow-expiry=run, so that the bucket's lifecycle rule,
// which counts days from creation, counts them from the run's end. Events
// cannot carry expiresAt from the start: a run may outlive any retention,
// and nothing of a running run may expire. A reply stream (one whose name
// is not under world.RunStreamPrefix) is stamped an hour ahead by
// CloseStream's own UpdateItem, and its objects are tagged
// workflow-expiry=reply at upload (a day: a lifecycle rule's smallest
// unit). Disposed hooks and dedup markers carried expiresAt already.
//
// # Waiting
//
// The World is not a world.Notifier: waiters poll GetRun, Events and
// ReadStream, one Query each, at a world.Pace (at most 5 requests a second
// per waiter after its first second). With Options.StreamEvents it is a
// world.StreamSubscriber: a stream's writer publishes each append to an
// AppSync Events channel, and a stream reader subscribed to it reads at
// once instead of at its next poll (streamevents.go, streamsubscribe.go).
//
// # Costs
//
// Calls reports the requests sent per "Service.Operation", retries
// included. TestCallCosts measures these, per operation:
//
//	CreateRun                         1 TransactWriteItems (2 + events items)
//	  with a payload in S3            + 1 S3 PutObject per payload
//	  of an existing run              1 TransactWriteItems, 1 Query
//	StartRun                          CreateRun's, 1 SendMessage without the DedupKey's marker
//	  of an unfinished run            CreateRun's, then Enqueue with the DedupKey
//	StartLimited, a free slot         StartRun's (the slot rides in the run's transaction)
//	  behind a full limit             1 TransactWriteItems, no message; 2 (one refused) when
//	                                  this World last found the partition free
//	  under a rate                    + 1 GetItem of the partition's head; a start held back
//	                                  enqueues with the DedupKey
//	ReleaseSlot                       1 Query of the queue's front, 1 TransactWriteItems,
//	                                  + 1 SendMessage for the run let in (TestCallsPerLimitedStart)
//	GetRun                            1 Query of run and log head (+ 1 GetObject per payload in S3)
//	ListRuns                          16 Query (one per shard) and 1 per further page a shard
//	                                  reads, 1 BatchGetItem of runs and log heads per 50 runs
//	                                  listed (+ GetObjects)
//	MigrateRunIndexes                 1 Scan per page, 1 UpdateItem per run without shard keys
//	AppendEvents                      1 TransactWriteItems (events + 1, + 1 with an update;
//	                                  over 98 events, packed: ceil(events/98) a item)
//	  at a taken slot                 1 TransactWriteItems, 1 Query
//	  AppendLeased                    the same: the lease is checked in the head's condition
//	Events                            1 Query (+ GetObjects)
//	ReadRun                           1 Query, newest first, of the run, inbox (its messages:
//	                                  the first fold reads no inbox), log head and the tail if
//	                                  it fits the first page (+ GetObjects)
//	Deliver                           1 PutItem, delivered again or not (+ 1 PutObject)
//	Inbox                             1 Query (+ GetObjects)
//	Withdraw                          1 DeleteItem (+ 1 DeleteObject of a payload in S3)
//	AppendFolded                      1 TransactWriteItems (events + messages + 1 items),
//	                                  + 1 DeleteObject per folded message whose payload was in S3
//	AcquireLease, RenewLease,         1 UpdateItem each (of the log head), refused or not;
//	  ReleaseLease, AcquireLeaseAt    AcquireLeaseAt's answer is the head it wrote
//	  ReleaseLease after the log grew 2 UpdateItem (the second makes the run due now)
//	OverdueRuns                       16 Query of the runs-by-due index (one per shard),
//	                                  1 BatchGetItem per 100 candidates
//	MarkRequeued                      1 UpdateItem; a run due by its inbox 1 refused UpdateItem,
//	                                  1 Query of the inbox, 1 TransactWriteItems
//	ClaimHook                         1 PutItem; a takeover 2
//	GetHook                           1 GetItem
//	DisposeHook                       1 DeleteItem, or 1 UpdateItem with retention
//	Enqueue                           1 SendMessage
//	  with a DedupKey                 1 PutItem, and unless dropped 1 SendMessage, 1 UpdateItem
//	Receive                           1 ReceiveMessage per poll (+ 1 DeleteItem with a DedupKey)
//	Ack                               1 DeleteMessage
//	Release                           1 ChangeMessageVisibility
//	WriteStream                       1 TransactWriteItems per 99 chunks (chunks + 1 items),
//	                                  + 1 after another writer's append,
//	                                  + 1 AppSync EventPublish with StreamEvents
//	ReadStream                        1 Query; a closed stream + 1 GetObject
//	CloseStream                       2 UpdateItem, 1 Query per page, 1 PutObject (or a
//	                                  multipart upload), 1 BatchWriteItem per 25 chunks;
//	                                  closing again 1 UpdateItem, 1 Query;
//	                                  + 1 AppSync EventPublish with StreamEvents
//	SubscribeStream                   1 EventSubscribe per stream and World (readers
//	                                  share it), 1 EventConnect per connection
//	ExpireRun                         1 Query per page, 1 BatchWriteItem per 25 events not
//	                                  stamped by the terminal append, 1 UpdateItem per run
//	                                  stream, 1 S3 CopyObject per object of the run
//
// Transactional writes cost DynamoDB two write units per KB of each item.
package aws
