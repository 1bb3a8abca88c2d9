// The key declarations (ConfigKey, ConfigSection, ConfigProblem, WordList) are part of this
// module's interface: every user of FallGuardConfig sees them.
@_exported import FallGuardConfigKeys
