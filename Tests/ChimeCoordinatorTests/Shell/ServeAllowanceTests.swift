import Testing
@testable import ChimeCoordinator

/// Issue 37, item 2: how many control requests a turn reads and serves, adjusted to the time
/// turns spend on them (additive increase, multiplicative decrease). Pure.
@Suite struct ServeAllowanceTests {
    let target = Duration.milliseconds(2)

    @Test func startsAtItsInitialValueClampedToTheBounds() {
        #expect(ServeAllowance(target: target).requestsPerTurn == 64)
        #expect(ServeAllowance(target: target, initial: 1).requestsPerTurn == 8)
        #expect(ServeAllowance(target: target, initial: 5000).requestsPerTurn == 1000)
    }

    @Test func growsByEightOnlyAfterATurnThatUsedItAllWithinTheTarget() {
        var allowance = ServeAllowance(target: target)
        allowance.onTurn(served: 64, spent: .microseconds(1500))
        #expect(allowance.requestsPerTurn == 72)
        // Fewer requests than allowed waited: that turn says nothing about more.
        allowance.onTurn(served: 10, spent: .microseconds(100))
        #expect(allowance.requestsPerTurn == 72)
        // Exactly the target is within it.
        allowance.onTurn(served: 72, spent: .milliseconds(2))
        #expect(allowance.requestsPerTurn == 80)
    }

    @Test func shrinksByAQuarterAfterATurnOverTheTarget() {
        var allowance = ServeAllowance(target: target)
        allowance.onTurn(served: 64, spent: .microseconds(2001))
        #expect(allowance.requestsPerTurn == 48)
        // Over the target whether or not the turn used its whole allowance.
        allowance.onTurn(served: 3, spent: .milliseconds(9))
        #expect(allowance.requestsPerTurn == 36)
    }

    @Test func aTurnThatServedNothingChangesNothing() {
        var allowance = ServeAllowance(target: target)
        allowance.onTurn(served: 0, spent: .seconds(1))
        #expect(allowance.requestsPerTurn == 64)
    }

    @Test func staysWithinEightAndAThousand() {
        var allowance = ServeAllowance(target: target)
        for _ in 0..<50 { allowance.onTurn(served: 1000, spent: .seconds(1)) }
        #expect(allowance.requestsPerTurn == 8)
        // 8 - 8/4 = 6 would pass the floor.
        allowance.onTurn(served: 8, spent: .seconds(1))
        #expect(allowance.requestsPerTurn == 8)
        for _ in 0..<200 { allowance.onTurn(served: 1000, spent: .zero) }
        #expect(allowance.requestsPerTurn == 1000)
    }
}

/// The allowance binds only while two or more connections send.
@Suite struct ServeAllowanceSharingTests {
    @Test func oneConnectionAloneKeepsTheMaximum() {
        var allowance = ServeAllowance(target: .milliseconds(2))
        #expect(allowance.limit(at: 10) == 1000)
        allowance.noteWaiting(connections: 1, at: 10)
        #expect(allowance.limit(at: 10) == 1000)
    }

    @Test func twoConnectionsBindItForOneSecond() {
        var allowance = ServeAllowance(target: .milliseconds(2))
        allowance.noteWaiting(connections: 2, at: 10)
        #expect(allowance.limit(at: 10) == 64)
        #expect(allowance.limit(at: 10.999) == 64)
        #expect(allowance.limit(at: 11) == 1000)
        // A later turn with one connection does not end the sharing early.
        allowance.noteWaiting(connections: 1, at: 10.5)
        #expect(allowance.limit(at: 10.9) == 64)
    }
}
