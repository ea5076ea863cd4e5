package iamcheck

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

const template = `
Parameters:
  ModelId: {Type: String}
  KeyArn: {Type: String, Default: "", AllowedPattern: "^(arn:aws:kms:[a-z0-9-]+:[0-9]{12}:key/[a-z0-9-]+)?$"}
  AnyArn: {Type: String, Default: ""}
Conditions:
  KeyCreated: !Equals [!Ref KeyArn, ""]
Globals:
  Function:
    Environment:
      Variables:
        WORKFLOW_TABLE: !Ref Table
        WORKFLOW_PAYLOAD_KMS_KEY: !If [KeyCreated, !GetAtt Key.Arn, !Ref KeyArn]
Resources:
  Key: {Type: AWS::KMS::Key, Condition: KeyCreated}
  Table: {Type: AWS::DynamoDB::Table}
  Queue: {Type: AWS::SQS::Queue}
  Bucket: {Type: AWS::S3::Bucket}
  Shared:
    Type: AWS::IAM::ManagedPolicy
    Properties:
      PolicyDocument:
        Statement:
          - Effect: Allow
            Action: [dynamodb:GetItem, dynamodb:PutItem]
            Resource: !GetAtt Table.Arn
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - !Ref Shared
        - Statement:
            - Effect: Allow
              Action: s3:GetObject
              Resource: !Sub "${Bucket.Arn}/streams/*"
            - Effect: Allow
              Action: kms:Decrypt
              Resource: !If [KeyCreated, !GetAtt Key.Arn, !Ref KeyArn]
              Condition:
                "Null": {"kms:EncryptionContext:workflow:runId": "false"}
  FnExtra:
    Type: AWS::IAM::Policy
    Properties:
      Roles: [!Ref FnRole]
      PolicyDocument:
        Statement:
          Effect: Allow
          Action: sqs:SendMessage
          Resource: !GetAtt [Queue, Arn]
  FnModel:
    Type: AWS::IAM::Policy
    Properties:
      Roles: [!Ref FnRole]
      PolicyDocument:
        Statement:
          Effect: Allow
          Action: bedrock:InvokeModelWithResponseStream
          Resource: !Sub "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${ModelId}"
  FnFeed:
    Type: AWS::Lambda::EventSourceMapping
    Properties:
      EventSourceArn: !GetAtt Queue.Arn
      FunctionName: !Ref Fn.Alias
  Wide:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - Statement:
            - {Effect: Allow, Action: "dynamodb:*", Resource: !GetAtt Table.Arn}
            - {Effect: Allow, Action: s3:GetObject, Resource: "*"}
            - {Effect: Allow, Action: s3:GetObject, Resource: "arn:aws:s3:::elsewhere/*"}
            - {Effect: Allow, Action: bedrock:InvokeModel, Resource: !Sub "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/*"}
            - {Effect: Allow, Action: kms:Decrypt, Resource: !If [KeyCreated, !GetAtt Key.Arn, "*"]}
            - {Effect: Allow, Action: kms:GenerateDataKey, Resource: !Ref AnyArn}
        - AWSLambdaBasicExecutionRole
`

func parse(t *testing.T) *Template {
	t.Helper()
	tmpl, err := ParseTemplate([]byte(template))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

func TestGrantsReadEveryPlaceAPolicyComesFrom(t *testing.T) {
	got, err := parse(t).Grants("Fn")
	if err != nil {
		t.Fatal(err)
	}
	want := []Grant{
		{"bedrock:InvokeModelWithResponseStream", "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${ModelId}"},
		{"dynamodb:GetItem", "${Table.Arn}"},
		{"dynamodb:PutItem", "${Table.Arn}"},
		{"kms:Decrypt", "!If [KeyCreated, ${Key.Arn}, ${KeyArn}]"},
		{"s3:GetObject", "${Bucket.Arn}/streams/*"},
		{"sqs:SendMessage", "${Queue.Arn}"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("grants %v, want %v", got, want)
	}
	if v, ok := parse(t).Variable("Fn", "WORKFLOW_TABLE"); !ok || v != "${Table}" {
		t.Errorf("Fn's WORKFLOW_TABLE: %q, %v; want the Globals' ${Table}", v, ok)
	}
	// The key a function is given is the key it is granted: the same
	// expression, which covers only itself.
	if v, ok := parse(t).Variable("Fn", "WORKFLOW_PAYLOAD_KMS_KEY"); !ok || !slices.Contains(want, Grant{"kms:Decrypt", v}) {
		t.Errorf("Fn's WORKFLOW_PAYLOAD_KMS_KEY: %q, %v; want the resource of its kms:Decrypt grant", v, ok)
	}
	polling, err := parse(t).EventSourceNeeds("Fn")
	if err != nil || len(polling) != 3 || polling[0] != (Grant{"sqs:ReceiveMessage", "${Queue.Arn}"}) {
		t.Fatalf("the event source mapping's needs: %v, %v", polling, err)
	}
}

func TestGrantsRefuseWhatTheyCannotJudge(t *testing.T) {
	_, err := parse(t).Grants("Wide")
	// A parameter names a resource only if its pattern refuses "*".
	for _, want := range []string{"wildcard action dynamodb:*", `resource "*"`, `resource "arn:aws:s3:::elsewhere/*"`, `foundation-model/*" is not`, "a policy iamcheck cannot read", `resource "${AnyArn}"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v; want it to name %s", err, want)
		}
	}
	if err == nil || strings.Count(err.Error(), `resource "*"`) != 2 {
		t.Errorf("error %v; want it to refuse both grants on \"*\", the one behind an !If too", err)
	}
}

// A function that seals must be granted the KMS calls its code makes on
// the key it is given: a missing grant or a call on another key fails
// (Grants refuses one on "*": TestGrantsRefuseWhatTheyCannotJudge).
func TestKMSGrantsAreTheKeysCalls(t *testing.T) {
	tmpl := parse(t)
	ref, _ := tmpl.Variable("Fn", "WORKFLOW_PAYLOAD_KMS_KEY")
	n := Names{PayloadKey: "arn:aws:kms:us-east-1:000000000000:key/k1", PayloadKeyRef: ref}
	var needs []Grant
	for _, params := range []any{
		&kms.GenerateDataKeyInput{KeyId: aws.String(n.PayloadKey)},
		&kms.DecryptInput{KeyId: aws.String(n.PayloadKey)},
	} {
		got, err := n.needs(params, nil)
		if err != nil {
			t.Fatal(err)
		}
		needs = append(needs, got...)
	}
	grants, err := tmpl.Grants("Fn")
	if err != nil {
		t.Fatal(err)
	}
	unused, missing := Compare(needs, grants)
	if len(missing) != 1 || missing[0] != (Grant{"kms:GenerateDataKey", ref}) {
		t.Errorf("missing %v; want only kms:GenerateDataKey on %s", missing, ref)
	}
	if slices.ContainsFunc(unused, func(g Grant) bool { return strings.HasPrefix(g.Action, "kms:") }) {
		t.Errorf("unused KMS grants %v", unused)
	}
	if got, _ := n.needs(&kms.DecryptInput{KeyId: aws.String("arn:aws:kms:us-east-1:000000000000:key/other")}, nil); got[0].Resource == ref {
		t.Errorf("a call on another key needs %v", got)
	}
}

func TestCompareListsBothWays(t *testing.T) {
	grants := []Grant{{"s3:GetObject", "${Bucket.Arn}/streams/*"}, {"dynamodb:DeleteItem", "${Table.Arn}"}}
	needs := []Grant{{"s3:GetObject", "${Bucket.Arn}/streams/a/b"}, {"s3:GetObject", "${Bucket.Arn}/blobs/c"}}
	unused, missing := Compare(needs, grants)
	if !slices.Equal(unused, grants[1:]) || !slices.Equal(missing, needs[1:]) {
		t.Fatalf("unused %v, missing %v", unused, missing)
	}
}

func TestCallsNeedTheActionsIAMAuthorisesThem(t *testing.T) {
	n := Names{Table: "t", Bucket: "b", Queues: map[string]string{"q-url": "Queue"},
		ScheduleGroup: "g", ScheduleGroupRef: "${Group}", SchedulerRole: "arn:role", SchedulerRoleRef: "${Role.Arn}",
		Secret: "s", SecretRef: "${Token}", Model: "m", ModelRef: "${ModelId}"}
	for _, c := range []struct {
		params any
		err    error
		want   []Grant
	}{
		{&dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
			{Put: &ddbtypes.Put{TableName: aws.String("t")}},
			{ConditionCheck: &ddbtypes.ConditionCheck{TableName: aws.String("t")}},
		}}, nil, []Grant{{"dynamodb:PutItem", "${Table.Arn}"}, {"dynamodb:ConditionCheckItem", "${Table.Arn}"}}},
		{&dynamodb.QueryInput{TableName: aws.String("t"), IndexName: aws.String("i")}, nil, []Grant{{"dynamodb:Query", "${Table.Arn}/index/i"}}},
		{&dynamodb.GetItemInput{TableName: aws.String("other")}, nil, []Grant{{"dynamodb:GetItem", "table other of no stack"}}},
		{&sqs.SendMessageBatchInput{QueueUrl: aws.String("q-url")}, nil, []Grant{{"sqs:SendMessage", "${Queue.Arn}"}}},
		{&s3.CopyObjectInput{CopySource: aws.String("b/k%3A1"), Key: aws.String("k:1"), TaggingDirective: s3types.TaggingDirectiveReplace, Tagging: aws.String("x=y")}, nil,
			[]Grant{{"s3:GetObject", "${Bucket.Arn}/k:1"}, {"s3:PutObject", "${Bucket.Arn}/k:1"}, {"s3:PutObjectTagging", "${Bucket.Arn}/k:1"}}},
		{&s3.GetObjectInput{Key: aws.String("k")}, &s3types.NoSuchKey{}, []Grant{{"s3:GetObject", "${Bucket.Arn}/k"}, {"s3:ListBucket", "${Bucket.Arn}"}}},
		{&scheduler.CreateScheduleInput{GroupName: aws.String("g"), Name: aws.String("s"), Target: &schedtypes.Target{RoleArn: aws.String("arn:role")}}, nil, []Grant{
			{"scheduler:CreateSchedule", "arn:${AWS::Partition}:scheduler:${AWS::Region}:${AWS::AccountId}:schedule/${Group}/s"},
			{"iam:PassRole", "${Role.Arn}"},
		}},
		{&secretsmanager.GetSecretValueInput{SecretId: aws.String("s")}, nil, []Grant{{"secretsmanager:GetSecretValue", "${Token}"}}},
		{&bedrockruntime.ConverseStreamInput{ModelId: aws.String("m")}, nil, []Grant{{"bedrock:InvokeModelWithResponseStream", "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${ModelId}"}}},
		{&bedrockruntime.ConverseInput{ModelId: aws.String("other")}, nil, []Grant{{"bedrock:InvokeModel", "model other of no stack"}}},
	} {
		got, err := n.needs(c.params, c.err)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%T: %v, %v; want %v", c.params, got, err, c.want)
		}
	}
	if _, err := n.needs(&sqs.PurgeQueueInput{}, nil); err == nil {
		t.Error("a call of unknown needs passed")
	}
}
