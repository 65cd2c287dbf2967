import ChimeCore
import ChimeWire
import Foundation

/// The sounds directory (`notifications.soundsDirectory`) as the shell checks the named sounds
/// of a `schedule` request against it before handing the request to the state
/// (`CoordinatorState.onRequest(_:from:at:monotonic:soundProblems:)`): the state reads no files.
///
/// Each distinct name is checked once a request, its file's headers read then (a file added,
/// fixed or removed while the coordinator runs counts from the next request on).
struct SoundLibrary {
    /// The directory the sound files are in.
    let directory: URL

    /// The library of `directory`; `nil` when none is configured (an empty path: every named
    /// sound is then taken as it is).
    init?(directory: String) {
        guard !directory.isEmpty else { return nil }
        self.directory = URL(fileURLWithPath: directory)
    }

    /// What is wrong with each sound `request` names that cannot be used (the problem as
    /// `SoundFile` words it); empty for a request that is not a `schedule` or whose sounds are
    /// fine. `default` names the system sound and is never looked up.
    func problems(in request: ControlRequest) -> [String: String] {
        guard case .schedule(let reminders) = request.command else { return [:] }
        var problems: [String: String] = [:]
        var checked = Set<String>()
        for reminder in reminders {
            guard let sound = reminder.content.sound, sound != "default", checked.insert(sound).inserted else { continue }
            if let problem = problem(withSoundNamed: sound) { problems[sound] = problem }
        }
        return problems
    }

    /// What is wrong with sound `name`, or `nil` when its file is usable (`SoundFile.validate`).
    func problem(withSoundNamed name: String) -> String? {
        do throws(SoundFileError) {
            _ = try SoundFile.validate(fileAt: try SoundFile.url(forSoundNamed: name, in: directory))
            return nil
        } catch {
            return error.message
        }
    }
}
