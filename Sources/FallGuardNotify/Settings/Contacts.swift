import FallGuardCore

// Contacts are ``Recipient`` values in the configuration: `contacts: [{name, phone, email}]`,
// in order: the first is the primary contact, escalation goes down the list.

extension Recipient: ConfigSection {
    public func problems(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.required(name, at: path + ["name"])
        if let phone { found += ConfigCheck.phone(phone, at: path + ["phone"]) }
        if let email { found += ConfigCheck.email(email, at: path + ["email"]) }
        if phone == nil && email == nil {
            found.append(ConfigProblem(path, "a contact needs a phone or an e-mail address"))
        }
        return found
    }
}

extension Wearer: ConfigSection {
    public func problems(at path: [String]) -> [ConfigProblem] {
        ConfigCheck.required(name, at: path + ["name"])
    }
}
