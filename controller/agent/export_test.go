package agent

// OpenLogFiles is how many agent log files the process's shared writer holds open now.
func OpenLogFiles() int { return sharedLogs.openCount() }

// MaxOpenLogs bounds OpenLogFiles.
const MaxOpenLogs = maxOpenLogs
