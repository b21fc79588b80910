extension ProxyConfiguration {
    /// Every key with its environment variable, what it takes and its embedded default, as a Markdown table
    /// made from the settings themselves (`ImageProxy settings`; `config/SETTINGS.md` is its output, and a
    /// test holds the two equal). Credentials show no default.
    public static func settingsTable() -> String {
        let defaults = ProxyConfiguration()
        var lines = [
            "# Settings",
            "",
            "Every configuration key, the environment variable that overrides it, what it takes and its embedded default.",
            "Made by `ImageProxy settings` from the settings themselves; the comments in `config/imageproxy.yaml` say",
            "what each does. Presets (`presets.<name>`) and named overlays (`overlays.<name>.*`) come from the file only.",
            "",
            "| key | environment variable | takes | default |",
            "|---|---|---|---|",
        ]
        for setting in settings.sorted(by: { $0.key < $1.key }) {
            let value = setting.read(defaults)
            let shown = setting.isSecret ? "(a credential: none)" : value.isEmpty ? "(empty)" : "`\(value.replacingOccurrences(of: "|", with: "\\|"))`"
            var environment = "`\(setting.environmentName)`"
            if let old = setting.deprecatedEnvironmentName { environment += " (formerly `\(old)`, still read)" }
            lines.append("| `\(setting.key)` | \(environment) | \(setting.expectation.replacingOccurrences(of: "|", with: "\\|")) | \(shown) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
