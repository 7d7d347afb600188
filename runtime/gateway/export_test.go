package gateway

// Fingerprint exposes fingerprint to the tests, which check it against a
// golden value and forge approvals with other arguments.
var Fingerprint = fingerprint

// ApprovalIDOf exposes approvalID: the ID of the approval a call with
// that key files.
var ApprovalIDOf = approvalID
