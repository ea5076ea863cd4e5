// Package chat serves durable agent chats over HTTP, in the two patterns
// of the Workflow SDK's chat session modeling
// (https://useworkflow.dev/docs/ai/chat-session-modeling):
//
//   - [SingleTurn]: every user turn is a run of its own, on the code
//     deployed when it starts; the client owns the conversation and sends
//     all of it each turn.
//   - [Session]: one run owns the conversation, its run ID the session's.
//     Messages from users, system events and other services arrive on the
//     session's hook whenever they are sent, also while the model is
//     mid-turn; the session queues them and takes them between turns, in
//     order, once each (a message's ID makes a redelivery a no-op).
//
// Each has an http.Handler that starts or resumes the conversation and
// streams the run's parts (agent.Part, in the agent's namespace of the
// run's stream) as Server-Sent Events or NDJSON, chosen by the Accept
// header, with the run's ID in [RunIDHeader], and a reconnect route that
// resumes the stream from a cursor: the index in the run's stream of the
// first part to send ([StartIndexParam]), or one past an SSE client's
// Last-Event-ID. Every part carries its index (the SSE event ID), so a
// client that reconnects from the index after the last part it saw gets
// the rest, nothing twice.
//
//	var assistant = agent.New("travel", model, agent.WithTools(search, book))
//	var travel = chat.NewSession(assistant)
//
//	mux.Handle("/sessions/", travel.Handler(client, "/sessions"))
//
// # Who may read a conversation
//
// The handlers authenticate no one: a run's ID is all a caller needs to
// read its stream or send it a message, so put them behind the
// application's authentication, as any route. A run started with an
// [IdempotencyKeyHeader] has an ID derived from the workflow and the key
// alone, so without [WithCaller] whoever sends the same key joins the same
// session and reads it: a key is then as secret as the conversation. With
// WithCaller (the caller's identity, as the application authenticated
// it) a key names a run among one caller's requests only, and every route
// answers another caller's run as an unknown session.
//
// The handlers run in any server: net/http, examples/devserver, and a Lambda
// function behind a streaming Function URL (lambdaurl), whose writes go
// out as they are made.
package chat
