/// The introspection XML for one node, generated from the exported descriptions: the standard
/// interfaces the connection answers for that node, the node's own interfaces, and its children.
/// Tools (busctl, d-feet) and BlueZ read it; the format is the D-Bus specification's.
struct DBusIntrospection {
  /// The interface shape introspection needs, without handlers, so the standard interfaces can be
  /// constants.
  struct Interface: Sendable {
    struct Method: Sendable {
      var name: String
      var inputs: [DBusArgument]
      var outputs: [DBusArgument]
    }

    struct Property: Sendable {
      var name: String
      var signature: DBusSignature
      var access: DBusProperty.Access
    }

    var name: String
    var methods: [Method]
    var properties: [Property] = []
    var signals: [DBusSignalDeclaration] = []
  }

  var interfaces: [Interface]
  /// Child node names, one path element each.
  var children: [String]

  static let introspectable = Interface(
    name: DBusStandardInterface.introspectable,
    methods: [.init(name: "Introspect", inputs: [], outputs: [DBusArgument("xml_data", "s")])])

  /// libdbus answers Peer (Ping, GetMachineId) on every path by itself.
  static let peer = Interface(
    name: DBusStandardInterface.peer,
    methods: [
      .init(name: "Ping", inputs: [], outputs: []),
      .init(name: "GetMachineId", inputs: [], outputs: [DBusArgument("machine_uuid", "s")]),
    ])

  static let properties = Interface(
    name: DBusStandardInterface.properties,
    methods: [
      .init(
        name: "Get", inputs: [DBusArgument("interface_name", "s"), DBusArgument("property_name", "s")],
        outputs: [DBusArgument("value", "v")]),
      .init(
        name: "GetAll", inputs: [DBusArgument("interface_name", "s")],
        outputs: [DBusArgument("properties", "a{sv}")]),
      .init(
        name: "Set",
        inputs: [
          DBusArgument("interface_name", "s"), DBusArgument("property_name", "s"), DBusArgument("value", "v"),
        ], outputs: []),
    ],
    signals: [
      DBusSignalDeclaration(
        "PropertiesChanged",
        arguments: [
          DBusArgument("interface_name", "s"), DBusArgument("changed_properties", "a{sv}"),
          DBusArgument("invalidated_properties", "as"),
        ])
    ])

  static let objectManager = Interface(
    name: DBusStandardInterface.objectManager,
    methods: [
      .init(
        name: "GetManagedObjects", inputs: [],
        outputs: [DBusArgument("objpath_interfaces_and_properties", "a{oa{sa{sv}}}")])
    ],
    signals: [
      DBusSignalDeclaration(
        "InterfacesAdded",
        arguments: [DBusArgument("object_path", "o"), DBusArgument("interfaces_and_properties", "a{sa{sv}}")]),
      DBusSignalDeclaration(
        "InterfacesRemoved", arguments: [DBusArgument("object_path", "o"), DBusArgument("interfaces", "as")]),
    ])

  var xml: String {
    var lines = [
      #"<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN""#,
      #" "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">"#,
      "<node>",
    ]
    for interface in interfaces {
      lines.append("  <interface name=\"\(escape(interface.name))\">")
      for method in interface.methods {
        lines.append("    <method name=\"\(escape(method.name))\">")
        for argument in method.inputs { lines.append(argumentLine(argument, direction: "in")) }
        for argument in method.outputs { lines.append(argumentLine(argument, direction: "out")) }
        lines.append("    </method>")
      }
      for signal in interface.signals {
        lines.append("    <signal name=\"\(escape(signal.name))\">")
        for argument in signal.arguments { lines.append(argumentLine(argument, direction: nil)) }
        lines.append("    </signal>")
      }
      for property in interface.properties {
        lines.append(
          "    <property name=\"\(escape(property.name))\" type=\"\(escape(property.signature.rawValue))\""
            + " access=\"\(property.access.rawValue)\"/>")
      }
      lines.append("  </interface>")
    }
    for child in children { lines.append("  <node name=\"\(escape(child))\"/>") }
    lines.append("</node>")
    return lines.joined(separator: "\n") + "\n"
  }

  private func argumentLine(_ argument: DBusArgument, direction: String?) -> String {
    let name = argument.name.isEmpty ? "" : " name=\"\(escape(argument.name))\""
    let direction = direction.map { " direction=\"\($0)\"" } ?? ""
    return "      <arg\(name) type=\"\(escape(argument.signature.rawValue))\"\(direction)/>"
  }

  /// Escapes the characters XML attributes cannot hold. D-Bus names never contain them, but argument
  /// names are free text.
  private func escape(_ text: String) -> String {
    var escaped = ""
    for character in text {
      switch character {
      case "&": escaped += "&amp;"
      case "<": escaped += "&lt;"
      case ">": escaped += "&gt;"
      case "\"": escaped += "&quot;"
      default: escaped.append(character)
      }
    }
    return escaped
  }
}

extension DBusIntrospection.Interface {
  init(_ interface: DBusInterface) {
    self.init(
      name: interface.name,
      methods: interface.methods.map { .init(name: $0.name, inputs: $0.inputs, outputs: $0.outputs) },
      properties: interface.properties.map {
        .init(name: $0.name, signature: $0.signature, access: $0.access)
      },
      signals: interface.signals)
  }
}

/// The names of the standard interfaces the connection answers for exported objects.
public enum DBusStandardInterface {
  public static let introspectable = "org.freedesktop.DBus.Introspectable"
  public static let properties = "org.freedesktop.DBus.Properties"
  public static let objectManager = "org.freedesktop.DBus.ObjectManager"
  public static let peer = "org.freedesktop.DBus.Peer"
}
