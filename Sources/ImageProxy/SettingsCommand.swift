import ArgumentParser
import ProxyServer

/// `ImageProxy settings`: prints every configuration key with its environment variable, what it takes and its
/// default (the Markdown of `config/SETTINGS.md`).
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings", abstract: "Print every configuration key, its environment variable, what it takes and its default.")

    func run() throws {
        print(ProxyConfiguration.settingsTable(), terminator: "")
    }
}
