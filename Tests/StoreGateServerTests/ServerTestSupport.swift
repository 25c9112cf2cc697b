import Foundation
import Testing
@testable import StoreGateServer
